"""OpenAI Chat Completions: the pure request builder, the chunk translator, and the wire."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from di_code.agent import Agent
from di_code.agent.tool import FunctionTool
from di_code.ai.events import StreamEvent
from di_code.ai.message_builder import MessageBuilder
from di_code.ai.providers.openai import (
    OpenAIStreamState,
    apply_openai_chunk,
    build_openai_request,
    finish_openai,
)
from di_code.ai.stream import ProviderError, StreamOptions
from di_code.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDefinition,
    ToolResultContent,
    ToolResultMessage,
    UserMessage,
)
from tests.support.event_sequence import check_event_sequence
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.streams import collect, model_for, provider_for

LS = ToolDefinition("ls", "List a folder", {"type": "object", "properties": {"path": {}}})
MODEL = model_for("openai", id="gpt-x")


def assistant(*content: Any, stop: Any = "tool_use") -> AssistantMessage:
    return AssistantMessage(list(content), "openai", "gpt-x", stop_reason=stop)


# ---------------------------------------------------------------- request builder


def test_body_has_system_prompt_tools_and_include_usage() -> None:
    body = build_openai_request(
        MODEL, Context("sys", [UserMessage.of("hi")], [LS]), StreamOptions()
    )
    assert body["model"] == "gpt-x"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "ls", "description": "List a folder", "parameters": LS.parameters},
        }
    ]
    assert body["max_completion_tokens"] == MODEL.max_output_tokens
    assert "reasoning_effort" not in body


def test_max_tokens_is_always_sent_within_the_model_and_window_limits() -> None:
    local = Model("gemma", "gemma", "llamacpp", "openai-completions", context_window=2048)
    body = build_openai_request(local, Context(None, []), StreamOptions())
    assert body["max_tokens"] == 512  # a quarter of the window: the rest is the prompt's
    small = model_for("openai", max_output_tokens=100)
    options = StreamOptions(max_tokens=5000)
    assert build_openai_request(small, Context(None, []), options)["max_completion_tokens"] == 100


def test_an_assistant_message_with_tool_calls_never_has_null_content() -> None:
    messages: list[Message] = [UserMessage.of("list"), assistant(ToolCall("c1", "ls", {}))]
    sent = build_openai_request(MODEL, Context(None, messages), StreamOptions())["messages"]
    assert sent[1]["content"] == ""
    assert all(isinstance(m["content"], str) for m in sent)


def test_tool_calls_and_results_carry_matching_ids() -> None:
    messages: list[Message] = [
        UserMessage.of("list"),
        assistant(TextContent("ok"), ToolCall("c1", "ls", {"path": "."}), ToolCall("c2", "ls", {})),
        ToolResultMessage("c1", "ls", [TextContent("a.txt")]),
        ToolResultMessage("c2", "ls", [TextContent("boom")], is_error=True),
    ]
    body = build_openai_request(MODEL, Context(None, messages), StreamOptions())
    sent = body["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": "ok",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "ls", "arguments": '{"path": "."}'},
            },
            {"id": "c2", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
        ],
    }
    assert sent[2] == {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}
    assert sent[3] == {"role": "tool", "tool_call_id": "c2", "content": "boom"}


def test_failed_turns_go_as_their_text_and_a_note_and_no_call_lacks_a_result() -> None:
    messages: list[Message] = [
        UserMessage.of("one"),
        assistant(TextContent("half"), stop="error"),
        UserMessage.of("two"),
        assistant(ToolCall("c9", "ls", {})),
        UserMessage.of("three"),
    ]
    sent = build_openai_request(MODEL, Context(None, messages), StreamOptions())["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "tool", "user"]
    assert sent[1] == {
        "role": "assistant",
        "content": "half\n\n[This reply was cut off here by an error.]",
    }
    assert sent[4]["tool_call_id"] == "c9"


def test_invalid_json_arguments_are_sent_back_verbatim() -> None:
    messages: list[Message] = [UserMessage.of("x"), assistant(ToolCall("c1", "ls", "{oops"))]
    sent = build_openai_request(MODEL, Context(None, messages), StreamOptions())["messages"]
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == "{oops"


def test_options_map_to_fields() -> None:
    reasoning = model_for("openai", id="o4-mini", reasoning=True)
    options = StreamOptions(max_tokens=100, temperature=0.2, reasoning="high", session_id="s1")
    body = build_openai_request(reasoning, Context(None, []), options)
    assert body["max_completion_tokens"] == 100
    assert "temperature" not in body  # OpenAI's reasoning models refuse it
    assert body["reasoning_effort"] == "high"
    assert body["prompt_cache_key"] == "s1"
    local = Model("qwen", "qwen", "ollama", "openai-completions")
    body = build_openai_request(local, Context(None, []), options)
    assert body["max_tokens"] == 100
    assert body["temperature"] == 0.2
    assert "reasoning_effort" not in body and "prompt_cache_key" not in body


def test_images_as_data_urls_or_omitted() -> None:
    image = ImageContent("QUJD", "image/png")
    user = UserMessage([TextContent("see"), image])
    seeing = model_for("openai", input=frozenset({"text", "image"}))
    parts = build_openai_request(seeing, Context(None, [user]), StreamOptions())["messages"][0]
    assert parts["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,QUJD"},
    }
    blind = build_openai_request(MODEL, Context(None, [user]), StreamOptions())["messages"][0]
    assert "omitted" in blind["content"][1]["text"]


def test_images_from_tool_results_follow_in_one_user_message() -> None:
    seeing = model_for("openai", input=frozenset({"text", "image"}))
    messages: list[Message] = [
        UserMessage.of("look"),
        assistant(ToolCall("c1", "read", {})),
        ToolResultMessage("c1", "read", [ImageContent("QUJD", "image/png")]),
    ]
    sent = build_openai_request(seeing, Context(None, messages), StreamOptions())["messages"]
    assert sent[2]["role"] == "tool" and "next message" in sent[2]["content"]
    assert sent[3]["role"] == "user"
    assert sent[3]["content"][0]["image_url"]["url"].startswith("data:image/png")


# ---------------------------------------------------------------- chunk translator


def translate(*chunks: Any, done: bool = True) -> tuple[list[StreamEvent], AssistantMessage]:
    events: list[StreamEvent] = []
    builder = MessageBuilder(MODEL, events.append)
    builder.start()
    state = OpenAIStreamState()
    for chunk in chunks:
        apply_openai_chunk(chunk, state, builder)
    state.done = done
    finish_openai(state, builder)
    check_event_sequence(events)
    assert builder.finished is not None
    return events, builder.finished


def delta(finish: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": finish}]}


def call(index: int | None, call_id: str | None, name: str | None, args: Any) -> dict[str, Any]:
    fragment: dict[str, Any] = {"function": {"arguments": args}}
    if index is not None:
        fragment["index"] = index
    if call_id:
        fragment["id"] = call_id
    if name:
        fragment["function"]["name"] = name
    return fragment


def test_null_fields_are_ignored() -> None:
    _, message = translate(
        delta(role="assistant", content=None, tool_calls=None, reasoning=None),
        {"choices": [{"index": 0, "delta": None, "finish_reason": None}]},
        delta(content="hi"),
        delta("stop", content=None),
    )
    assert message.content == [TextContent("hi")]


def test_repeated_id_and_name_is_the_same_call() -> None:
    _, message = translate(
        delta(tool_calls=[call(0, "a", "ls", '{"pa')]),
        delta(tool_calls=[call(0, "a", "ls", 'th": 1}')]),
        delta(tool_calls=[call(1, "b", "ls", "{}")]),
        delta("tool_calls"),
    )
    assert message.content == [ToolCall("a", "ls", {"path": 1}), ToolCall("b", "ls", {})]
    assert message.stop_reason == "tool_use"


def test_a_new_id_on_the_same_index_is_a_new_call() -> None:
    _, message = translate(
        delta(tool_calls=[call(0, "a", "ls", "{}")]),
        delta(tool_calls=[call(0, "b", "read", '{"path": "x"}')]),
        delta("tool_calls"),
    )
    assert [c.id for c in message.tool_calls] == ["a", "b"]


def test_missing_ids_are_made_up_and_arguments_may_be_objects() -> None:
    _, message = translate(
        delta(tool_calls=[call(None, None, "ls", {"path": "."})]), delta("tool_calls")
    )
    assert message.content == [ToolCall("call_1", "ls", {"path": "."})]


def test_legacy_function_call() -> None:
    _, message = translate(
        delta(function_call={"name": "ls", "arguments": '{"a"'}),
        delta(function_call={"arguments": ": 2}"}),
        delta("function_call"),
    )
    assert message.content == [ToolCall("call_1", "ls", {"a": 2})]


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning", "reasoning_text"])
def test_reasoning_text_becomes_thinking(key: str) -> None:
    _, message = translate(delta(**{key: "hmm"}), delta(content="ok"), delta("stop"))
    assert message.content == [ThinkingContent("hmm"), TextContent("ok")]


def test_usage_after_finish_is_kept_and_cached_tokens_split_out() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 7,
        "prompt_tokens_details": {"cached_tokens": 60},
    }
    _, message = translate(delta("stop", content="x"), {"choices": [], "usage": usage})
    got = message.usage
    assert (got.input, got.output, got.cache_read, got.total_tokens) == (40, 7, 60, 107)


def test_finish_without_done_is_fine_and_done_without_finish_too() -> None:
    assert translate(delta("length", content="x"), done=False)[1].stop_reason == "length"
    assert translate(delta(content="x"), done=True)[1].stop_reason == "stop"


def test_stop_with_tool_calls_means_tool_use() -> None:
    _, message = translate(delta(tool_calls=[call(0, "a", "ls", "{}")]), delta("stop"))
    assert message.stop_reason == "tool_use"


def test_neither_finish_nor_done_is_an_error() -> None:
    with pytest.raises(ProviderError, match="ended before the response was complete"):
        translate(delta(content="x"), done=False)


def test_error_chunk_and_content_filter_raise() -> None:
    with pytest.raises(ProviderError, match=r"^upstream exploded"):
        translate({"error": {"message": "upstream exploded"}})
    with pytest.raises(ProviderError, match="content filter"):
        translate(delta("content_filter", content="x"))


def test_invalid_json_arguments_are_kept_as_text() -> None:
    _, message = translate(delta(tool_calls=[call(0, "a", "ls", "{nope")]), delta("tool_calls"))
    assert message.content == [ToolCall("a", "ls", "{nope")]


# ---------------------------------------------------------------- over the wire


async def test_request_on_the_wire_headers_and_extra_body(llm_server: LLMServer) -> None:
    llm_server.script(Turn(text="hello"))
    provider = provider_for(
        "openai",
        llm_server,
        headers={"x-title": "di-code"},
        extra_body={"tool_choice": "required"},
    )
    context = Context("sys", [UserMessage.of("hi")], [LS])
    _, message = await collect(provider.stream(MODEL, context))
    await provider.aclose()
    assert message.text == "hello"
    request = llm_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["x-title"] == "di-code"
    expected = build_openai_request(MODEL, context, StreamOptions())
    assert request.body == {**expected, "tool_choice": "required"}


async def test_no_key_sends_no_authorization(llm_server: LLMServer) -> None:
    llm_server.script(Turn(text="local"))
    provider = provider_for("openai", llm_server, api_key=None)
    await collect(provider.stream(MODEL, Context(None, [UserMessage.of("hi")])))
    await provider.aclose()
    assert "authorization" not in llm_server.requests[0].headers


async def test_invalid_tool_arguments_do_not_crash_the_turn(llm_server: LLMServer) -> None:
    """The loop answers the broken call with an error result, and the model tries again."""
    ran: list[dict[str, Any]] = []

    async def run_ls(tool_call_id: str, params: dict[str, Any], *_: Any) -> list[ToolResultContent]:
        ran.append(params)
        return [TextContent("a.txt")]

    tool = FunctionTool(
        "ls", "List", {"type": "object", "properties": {"path": {"type": "string"}}}, run_ls
    )
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("ls", '{"path": "src"', id="c1"),)),
        Turn(tool_calls=(ToolCallSpec("ls", {"path": "src"}, id="c2"),)),
        Turn(text="done"),
    )
    provider = provider_for("openai", llm_server)
    agent = Agent(provider, MODEL, tools=[tool])
    final = await agent.prompt("list src")
    await provider.aclose()
    assert final.text == "done"
    assert ran == [{"path": "src"}]
    second = llm_server.requests[1].body["messages"]
    broken = next(m for m in second if m.get("tool_call_id") == "c1")
    assert 'Tool "ls" failed' in broken["content"]
    last = llm_server.requests[2].body["messages"][-1]
    assert last == {"role": "tool", "tool_call_id": "c2", "content": "a.txt"}


@given(
    st.text(min_size=1, max_size=40),
    st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3),
    st.lists(st.integers(min_value=1, max_value=60), max_size=6),
)
def test_any_fragmentation_gives_the_same_message(
    text: str, arguments: dict[str, Any], cuts: list[int]
) -> None:
    args = json.dumps(arguments)

    def split(value: str) -> list[str]:
        bounds = [0, *sorted(c for c in cuts if c < len(value)), len(value)]
        return [value[a:b] for a, b in itertools.pairwise(bounds) if b > a]

    chunks = [delta(content=piece) for piece in split(text)]
    chunks.append(delta(tool_calls=[call(0, "a", "f", "")]))
    chunks += [delta(tool_calls=[call(0, None, None, piece)]) for piece in split(args)]
    _, message = translate(*chunks, delta("tool_calls"))
    assert message.content == [TextContent(text), ToolCall("a", "f", arguments)]
