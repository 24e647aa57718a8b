"""Anthropic Messages: the pure request builder, the event translator, and the wire."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from di_code.ai.events import StreamEvent
from di_code.ai.message_builder import MessageBuilder
from di_code.ai.providers.anthropic import (
    AnthropicStreamState,
    apply_anthropic_event,
    build_anthropic_request,
    finish_anthropic,
)
from di_code.ai.providers.retry import RetryableError
from di_code.ai.stream import ProviderError, StreamOptions
from di_code.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from di_code.config.models import PRESETS, resolve_model
from tests.support.event_sequence import check_event_sequence
from tests.support.llm_server import LLMServer, Turn
from tests.support.streams import collect, model_for, provider_for

LS = ToolDefinition("ls", "List a folder", {"type": "object"})
MODEL = model_for("anthropic", id="claude-x", max_output_tokens=32_000, reasoning=True)
CACHE = {"type": "ephemeral"}


def assistant(*content: Any, stop: Any = "tool_use") -> AssistantMessage:
    return AssistantMessage(list(content), "anthropic", "claude-x", stop_reason=stop)


def body_for(messages: list[Any], **options: Any) -> dict[str, Any]:
    return build_anthropic_request(MODEL, Context("sys", messages, [LS]), StreamOptions(**options))


# ---------------------------------------------------------------- request builder


def test_body_has_system_tools_and_max_tokens() -> None:
    body = body_for([UserMessage.of("hi")])
    assert body["model"] == "claude-x"
    assert body["stream"] is True
    assert body["max_tokens"] == 32_000
    assert body["system"] == [{"type": "text", "text": "sys", "cache_control": CACHE}]
    assert body["tools"] == [
        {"name": "ls", "description": "List a folder", "input_schema": {"type": "object"}}
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": CACHE}]}
    ]
    assert "thinking" not in body


def test_thinking_signature_goes_back_and_results_share_one_user_message() -> None:
    messages = [
        UserMessage.of("go"),
        assistant(
            ThinkingContent("plan", "sig-A"),
            ThinkingContent("foreign, unsigned"),
            TextContent(""),
            ToolCall("toolu_1", "ls", {"path": "."}),
            ToolCall("call.2", "ls", "{bad"),
        ),
        ToolResultMessage("toolu_1", "ls", [TextContent("a.txt")]),
        ToolResultMessage("call.2", "ls", [TextContent("invalid")], is_error=True),
    ]
    sent = body_for(messages)["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "plan", "signature": "sig-A"},
            {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"path": "."}},
            {"type": "tool_use", "id": "call_2", "name": "ls", "input": {}},
        ],
    }
    assert len(sent) == 3
    results = sent[2]["content"]
    assert sent[2]["role"] == "user"
    assert results[0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "a.txt"}],
        "is_error": False,
    }
    assert results[1]["tool_use_id"] == "call_2"
    assert results[1]["is_error"] is True
    assert results[1]["cache_control"] == CACHE


def test_failed_turns_go_as_their_text_and_a_note_and_orphan_calls_get_a_result() -> None:
    messages = [
        UserMessage.of("one"),
        assistant(TextContent("broken"), stop="aborted"),
        UserMessage.of("two"),
        assistant(ToolCall("t1", "ls", {})),
        UserMessage.of("three"),
    ]
    sent = body_for(messages)["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user", "user"]
    assert sent[1]["content"] == [
        {"type": "text", "text": "broken\n\n[The user interrupted this reply here.]"}
    ]
    assert sent[4]["content"][0]["tool_use_id"] == "t1"
    assert sent[4]["content"][0]["is_error"] is True


def test_an_unknown_model_gets_a_sane_max_tokens_within_its_window() -> None:
    unknown = resolve_model(PRESETS["anthropic"], "local-model")
    context = Context(None, [UserMessage.of("x")])
    assert build_anthropic_request(unknown, context, StreamOptions())["max_tokens"] == 8192
    small = replace(unknown, context_window=4096)
    assert build_anthropic_request(small, context, StreamOptions())["max_tokens"] == 1024


def test_thinking_budget_and_temperature() -> None:
    body = body_for([UserMessage.of("x")], reasoning="medium", temperature=0.5)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert "temperature" not in body  # the API refuses temperature with thinking
    small = body_for([UserMessage.of("x")], reasoning="high", max_tokens=4000)
    assert small["thinking"]["budget_tokens"] == 4000 - 1024
    tiny = body_for([UserMessage.of("x")], reasoning="low", max_tokens=1500, temperature=0.5)
    assert "thinking" not in tiny and tiny["temperature"] == 0.5


def test_images_are_base64_blocks() -> None:
    seeing = model_for("anthropic", input=frozenset({"text", "image"}))
    user = UserMessage([ImageContent("QUJD", "image/jpeg")])
    body = build_anthropic_request(seeing, Context(None, [user]), StreamOptions())
    block = body["messages"][0]["content"][0]
    assert block["source"] == {"type": "base64", "media_type": "image/jpeg", "data": "QUJD"}


# ---------------------------------------------------------------- event translator


def translate(*payloads: dict[str, Any]) -> tuple[list[StreamEvent], AssistantMessage]:
    events: list[StreamEvent] = []
    builder = MessageBuilder(MODEL, events.append)
    builder.start()
    state = AnthropicStreamState()
    for payload in payloads:
        apply_anthropic_event(payload, state, builder)
    finish_anthropic(state, builder)
    check_event_sequence(events)
    assert builder.finished is not None
    return events, builder.finished


def start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": fields}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(reason: str, output: int = 3) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": reason},
        "usage": {"output_tokens": output},
    }


@pytest.mark.parametrize(
    ("reason", "expected"),
    [("end_turn", "stop"), ("max_tokens", "length"), ("stop_sequence", "stop")],
)
def test_stop_reasons(reason: str, expected: str) -> None:
    _, message = translate(
        start(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="x"),
        stop(0),
        message_delta(reason),
    )
    assert message.stop_reason == expected


def test_ping_and_unknown_events_and_deltas_are_ignored() -> None:
    _, message = translate(
        {"type": "ping"},
        {"type": "future_event"},
        start(0, {"type": "text", "text": "a"}),
        delta(0, type="citations_delta", citation={}),
        delta(0, type="text_delta", text="b"),
        stop(0),
        message_delta("end_turn"),
        {"type": "message_stop"},
    )
    assert message.content == [TextContent("ab")]


def test_a_whole_tool_input_in_the_start_block() -> None:
    _, message = translate(
        start(0, {"type": "tool_use", "id": "t", "name": "ls", "input": {"path": "/"}}),
        stop(0),
        message_delta("tool_use"),
    )
    assert message.content == [ToolCall("t", "ls", {"path": "/"})]


def test_usage_from_start_and_delta() -> None:
    usage = {"input_tokens": 5, "cache_read_input_tokens": 7, "cache_creation_input_tokens": 2}
    _, message = translate(
        {"type": "message_start", "message": {"usage": {**usage, "output_tokens": 1}}},
        message_delta("end_turn", output=11),
    )
    got = message.usage
    assert (got.input, got.output, got.cache_read, got.cache_write) == (5, 11, 7, 2)


def test_error_events() -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(RetryableError):
        translate(overloaded)
    with pytest.raises(ProviderError, match=r"^api_error: Internal") as caught:
        translate({"type": "error", "error": {"type": "api_error", "message": "Internal"}})
    assert not isinstance(caught.value, RetryableError)


def test_no_stop_reason_and_refusal_are_errors() -> None:
    with pytest.raises(ProviderError, match="ended before"):
        translate(start(0, {"type": "text", "text": "x"}))
    with pytest.raises(ProviderError, match="refusal"):
        translate(message_delta("refusal"))


# ---------------------------------------------------------------- over the wire


async def test_headers_and_body_on_the_wire(llm_server: LLMServer) -> None:
    llm_server.script(Turn(thinking="hmm", text="hi"), Turn(text="again"))
    provider = provider_for("anthropic", llm_server)
    context = Context("sys", [UserMessage.of("hi")], [LS])
    _, first = await collect(provider.stream(MODEL, context))
    assert first.content == [ThinkingContent("hmm", "sig-1"), TextContent("hi")]
    follow = Context("sys", [*context.messages, first, UserMessage.of("more")], [LS])
    await collect(provider.stream(MODEL, follow))
    await provider.aclose()
    request = llm_server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.body == build_anthropic_request(MODEL, context, StreamOptions())
    replayed = llm_server.requests[1].body["messages"][1]
    assert replayed["content"][0] == {"type": "thinking", "thinking": "hmm", "signature": "sig-1"}
