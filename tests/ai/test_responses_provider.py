"""OpenAI Responses API: the pure request builder, the event translator, and the wire (the
loopback server refuses any request shape OpenAI would refuse)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from di_code.ai.events import StreamEvent
from di_code.ai.message_builder import MessageBuilder
from di_code.ai.providers.openai_responses import (
    ResponsesStreamState,
    apply_responses_event,
    build_responses_request,
    finish_responses,
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
from tests.support.event_sequence import check_event_sequence
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.streams import collect, model_for, provider_for
from tests.support.wire_responses import check_responses_request

LS = ToolDefinition("ls", "List a folder", {"type": "object", "properties": {}})
MODEL = model_for("responses", id="gpt-5", reasoning=True, input=frozenset({"text", "image"}))
ITEM = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAA=="}


def assistant(*content: Any, stop: Any = "tool_use") -> AssistantMessage:
    return AssistantMessage(list(content), MODEL.provider, MODEL.id, stop_reason=stop)


def body_for(messages: list[Any], model: Any = MODEL, **options: Any) -> dict[str, Any]:
    return build_responses_request(model, Context("sys", messages, [LS]), StreamOptions(**options))


# ---------------------------------------------------------------- request builder


def test_body_is_stateless_with_encrypted_reasoning_and_a_token_limit() -> None:
    body = body_for([UserMessage.of("hi")], session_id="s1", reasoning="medium")
    assert body == {
        "model": "gpt-5",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "stream": True,
        "store": False,
        "max_output_tokens": 16_384,
        "instructions": "sys",
        "tools": [
            {
                "type": "function",
                "name": "ls",
                "description": "List a folder",
                "parameters": LS.parameters,
                "strict": False,
            }
        ],
        "include": ["reasoning.encrypted_content"],
        "reasoning": {"effort": "medium", "summary": "auto"},
        "prompt_cache_key": "s1",
    }
    assert check_responses_request(body) is None


def test_reasoning_items_go_back_without_ids_before_what_they_led_to() -> None:
    signature = json.dumps(ITEM)
    turn = assistant(
        ThinkingContent("plan", signature),
        TextContent("Listing."),
        ToolCall("call_1", "ls", {"path": "."}),
    )
    result = ToolResultMessage("call_1", "ls", [TextContent("a.py")], is_error=True)
    body = body_for([UserMessage.of("go"), turn, result])
    assert body["input"][1:] == [
        {"type": "reasoning", "summary": [], "encrypted_content": "gAAA=="},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Listing.", "annotations": []}],
        },
        {"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": '{"path": "."}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "Error: a.py"},
    ]
    assert check_responses_request(body) is None


def test_other_models_reasoning_and_items_without_encrypted_content_are_not_sent() -> None:
    unencrypted = json.dumps({"type": "reasoning", "id": "rs_2", "summary": []})
    turn = assistant(
        ThinkingContent("hmm", "anthropic-sig"),
        ThinkingContent("", unencrypted),
        TextContent("ok"),
        stop="stop",
    )
    other = AssistantMessage([ThinkingContent("", json.dumps(ITEM))], "openai", "o3")
    body = body_for([UserMessage.of("go"), turn, other])
    assert [item.get("type") for item in body["input"]] == [None, "message"]


def test_orphan_calls_get_a_result_and_failed_turns_go_as_text_and_a_note() -> None:
    failed = assistant(TextContent("half"), stop="error")
    orphan = assistant(ToolCall("call_9", "ls", {}))
    body = body_for([UserMessage.of("a"), failed, orphan, UserMessage.of("b")])
    kinds = [item.get("type", item.get("role")) for item in body["input"]]
    assert kinds == ["user", "message", "function_call", "function_call_output", "user"]
    said = body["input"][1]["content"][0]["text"]
    assert said == "half\n\n[This reply was cut off here by an error.]"
    assert check_responses_request(body) is None


def test_images_are_input_images_and_tool_images_follow_the_outputs() -> None:
    image = ImageContent("aGVsbG8=", "image/png")
    shot = ToolResultMessage("call_1", "read", [TextContent("pic"), image])
    body = body_for(
        [
            UserMessage.of([TextContent("see"), image]),
            assistant(ToolCall("call_1", "read", {})),
            shot,
        ]
    )
    data_url = "data:image/png;base64,aGVsbG8="
    picture = {"type": "input_image", "image_url": data_url, "detail": "auto"}
    assert body["input"][0]["content"][1] == picture
    assert body["input"][-1] == {"role": "user", "content": [picture]}
    assert check_responses_request(body) is None


def test_non_reasoning_models_take_temperature_and_no_include() -> None:
    plain = model_for("responses", id="gpt-4.1")
    body = body_for([UserMessage.of("hi")], plain, temperature=0.2, max_tokens=100)
    assert (body["temperature"], body["max_output_tokens"]) == (0.2, 100)
    assert "include" not in body and "reasoning" not in body
    reasoning = body_for([UserMessage.of("hi")], temperature=0.2, reasoning="off")
    assert "temperature" not in reasoning and "reasoning" not in reasoning


# ---------------------------------------------------------------- stream translation


def translate(events: list[dict[str, Any]]) -> tuple[list[StreamEvent], AssistantMessage]:
    out: list[StreamEvent] = []
    builder = MessageBuilder(MODEL, out.append)
    state = ResponsesStreamState()
    for event in events:
        apply_responses_event(event, state, builder)
    finish_responses(state, builder)
    check_event_sequence(out)
    assert builder.finished is not None
    return out, builder.finished


def completed(status: str = "completed", **response: Any) -> dict[str, Any]:
    return {"type": f"response.{status}", "response": {"status": status, **response}}


def test_a_reasoning_item_without_summary_still_keeps_its_encrypted_content() -> None:
    _, message = translate(
        [
            {"type": "response.output_item.added", "item": {"type": "reasoning", "id": "rs_1"}},
            {"type": "response.output_item.done", "item": ITEM},
            {"type": "response.output_text.delta", "delta": "Hi"},
            completed(),
        ]
    )
    assert message.content[0] == ThinkingContent("", json.dumps(ITEM, separators=(",", ":")))
    assert message.content[1:] == [TextContent("Hi")]
    assert message.stop_reason == "stop"


def test_arguments_only_in_the_done_item_are_kept() -> None:
    call = {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": ""}
    _, message = translate(
        [
            {"type": "response.output_item.added", "item": call},
            {"type": "response.output_item.done", "item": {**call, "arguments": '{"a": 1}'}},
            completed(),
        ]
    )
    assert message.content == [ToolCall("c1", "ls", {"a": 1})]
    assert message.stop_reason == "tool_use"


def test_incomplete_is_length_and_usage_counts_cached_tokens() -> None:
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 60}}
    usage |= {"output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 40}}
    _, message = translate(
        [
            {"type": "response.output_text.delta", "delta": "cut"},
            completed(
                "incomplete", incomplete_details={"reason": "max_output_tokens"}, usage=usage
            ),
        ]
    )
    assert message.stop_reason == "length"
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (40, 60, 50)


def test_errors_before_content_are_retried_after_content_final() -> None:
    rate = {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down"}
    with pytest.raises(RetryableError, match="Slow down"):
        translate([rate])
    failed = completed("failed", error={"code": "server_error", "message": "boom"})
    with pytest.raises(ProviderError, match="boom") as caught:
        translate([{"type": "response.output_text.delta", "delta": "x"}, failed])
    assert not isinstance(caught.value, RetryableError)
    with pytest.raises(ProviderError, match="content filter"):
        translate([completed("incomplete", incomplete_details={"reason": "content_filter"})])
    with pytest.raises(ProviderError, match="before the response was complete"):
        translate([{"type": "response.output_text.delta", "delta": "x"}])


# ---------------------------------------------------------------- the wire


async def test_a_tool_round_trip_sends_the_reasoning_back(llm_server: LLMServer) -> None:
    llm_server.script(
        Turn(thinking="I should list.", tool_calls=(ToolCallSpec("ls", {"path": "."}),)),
        Turn(text="Done."),
    )
    provider = provider_for("responses", llm_server)
    try:
        _, first = await collect(
            provider.stream(MODEL, Context("sys", [UserMessage.of("go")], [LS]))
        )
        result = ToolResultMessage("call_1", "ls", [TextContent("a.py")])
        context = Context("sys", [UserMessage.of("go"), first, result], [LS])
        _, second = await collect(provider.stream(MODEL, context))
    finally:
        await provider.aclose()
    assert second.text == "Done.", second.error_message
    request = llm_server.requests[1]
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["input"][1] == {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "I should list."}],
        "encrypted_content": "sig-1",
    }
    assert request.body["input"][2]["call_id"] == request.body["input"][3]["call_id"] == "call_1"


async def test_a_malformed_request_is_refused_as_openai_would(llm_server: LLMServer) -> None:
    provider = provider_for("responses", llm_server, extra_body={"messages": []})
    try:
        _, message = await collect(provider.stream(MODEL, Context(None, [UserMessage.of("x")])))
    finally:
        await provider.aclose()
    assert message.error_message == "responses: HTTP 400: Unknown parameter: 'messages'."
