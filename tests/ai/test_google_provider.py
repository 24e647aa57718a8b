"""Gemini (native API): the pure request builder, the chunk translator, and the wire (the
loopback server refuses any request shape Google would refuse)."""

from __future__ import annotations

from typing import Any

import pytest

from di_code.ai.events import StreamEvent
from di_code.ai.message_builder import MessageBuilder
from di_code.ai.providers.google import (
    SKIP_SIGNATURE,
    GoogleStreamState,
    apply_google_chunk,
    build_google_request,
    finish_google,
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
from tests.support.wire_gemini import check_gemini_request, signature_of

LS = ToolDefinition("ls", "List a folder", {"type": "object", "additionalProperties": False})
IMAGES = frozenset({"text", "image"})
MODEL = model_for("gemini", id="gemini-2.5-flash", reasoning=True, input=IMAGES)
SIG = "c2lnLTE="


def model_turn(*content: Any, stop: Any = "tool_use") -> AssistantMessage:
    return AssistantMessage(list(content), "gemini", "gemini-2.5-flash", stop_reason=stop)


def body_for(messages: list[Any], model: Any = MODEL, **options: Any) -> dict[str, Any]:
    return build_google_request(model, Context("sys", messages, [LS]), StreamOptions(**options))


# ---------------------------------------------------------------- request builder


def test_body_has_system_tools_thinking_and_a_token_limit() -> None:
    body = body_for([UserMessage.of("hi")], reasoning="low", temperature=0.5)
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "generationConfig": {
            "maxOutputTokens": 16_384,
            "temperature": 0.5,
            "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 2048},
        },
        "systemInstruction": {"parts": [{"text": "sys"}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "ls",
                        "description": "List a folder",
                        "parametersJsonSchema": LS.parameters,
                    }
                ]
            }
        ],
    }
    assert check_gemini_request(body) is None
    assert "thinkingConfig" not in body_for([UserMessage.of("hi")])["generationConfig"]


def test_signatures_go_back_on_their_own_parts_and_results_share_a_turn() -> None:
    turn = model_turn(
        ThinkingContent("plan", SIG),
        TextContent("Two calls."),
        ToolCall("call_1", "ls", {"path": "a"}, SIG),
        ToolCall("call_2", "ls", {"path": "b"}),
    )
    results = [
        ToolResultMessage("call_1", "ls", [TextContent("x.py")]),
        ToolResultMessage("call_2", "ls", [TextContent("no such folder")], is_error=True),
    ]
    body = body_for([UserMessage.of("go"), turn, *results])
    assert body["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"text": "plan", "thought": True, "thoughtSignature": SIG},
                {"text": "Two calls."},
                {"functionCall": {"name": "ls", "args": {"path": "a"}}, "thoughtSignature": SIG},
                {"functionCall": {"name": "ls", "args": {"path": "b"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "ls", "response": {"output": "x.py"}}},
                {"functionResponse": {"name": "ls", "response": {"error": "no such folder"}}},
            ],
        },
    ]
    assert check_gemini_request(body) is None


def test_other_models_signatures_are_not_sent_and_gemini_3_gets_the_skip_value() -> None:
    """Anthropic's signatures are base64 too: only the model that signed gets them back."""
    blocks = [ThinkingContent("hmm", "RXFRQkNnSVlB"), ToolCall("t1", "ls", {}, "RXFRQkNnSVlB")]
    turn = AssistantMessage(blocks, "anthropic", "claude-sonnet-4-5", stop_reason="tool_use")
    result = ToolResultMessage("t1", "ls", [TextContent("ok")])
    gemini3 = model_for("gemini", id="gemini-3-pro-preview", reasoning=True)
    parts = body_for([UserMessage.of("go"), turn, result], gemini3)["contents"][1]["parts"]
    assert parts == [
        {"functionCall": {"name": "ls", "args": {}}, "thoughtSignature": SKIP_SIGNATURE}
    ]
    older = body_for([UserMessage.of("go"), turn, result])["contents"][1]["parts"]
    assert older == [{"functionCall": {"name": "ls", "args": {}}}]


def test_images_are_inline_data_and_tool_images_follow_the_responses() -> None:
    image = ImageContent("aGVsbG8=", "image/png")
    shot = ToolResultMessage("c1", "read", [TextContent("pic"), image])
    messages = [
        UserMessage.of([TextContent("see"), image]),
        model_turn(ToolCall("c1", "read", {})),
        shot,
    ]
    body = body_for(messages)
    inline = {"inlineData": {"mimeType": "image/png", "data": "aGVsbG8="}}
    assert body["contents"][0]["parts"] == [{"text": "see"}, inline]
    assert body["contents"][-1] == {"role": "user", "parts": [inline]}
    assert check_gemini_request(body) is None


# ---------------------------------------------------------------- stream translation


def chunk(*parts: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **extra}


def translate(chunks: list[dict[str, Any]]) -> AssistantMessage:
    out: list[StreamEvent] = []
    builder = MessageBuilder(MODEL, out.append)
    state = GoogleStreamState()
    for item in chunks:
        apply_google_chunk(item, state, builder)
    finish_google(state, builder)
    check_event_sequence(out)
    assert builder.finished is not None
    return builder.finished


def test_a_repeated_thought_signature_is_kept_once_per_block() -> None:
    message = translate(
        [
            chunk({"text": "a", "thought": True, "thoughtSignature": SIG}),
            chunk({"text": "b", "thought": True, "thoughtSignature": SIG}),
            chunk({"text": "answer", "thoughtSignature": "dGV4dA=="}),
            chunk({"text": "c", "thought": True, "thoughtSignature": "bmV3"}),
            chunk({"text": ""}, finish="STOP"),
        ]
    )
    assert message.content == [
        ThinkingContent("ab", SIG),
        TextContent("answer"),
        ThinkingContent("c", "bmV3"),
    ]


def test_calls_keep_the_servers_id_or_get_one_unique_to_the_response() -> None:
    message = translate(
        [
            chunk({"functionCall": {"id": "fc-9", "name": "ls", "args": {"a": 1}}}),
            chunk({"functionCall": {"name": "ls"}}, finish="MAX_TOKENS", responseId="r7"),
        ]
    )
    assert message.content == [ToolCall("fc-9", "ls", {"a": 1}), ToolCall("call_r7_2", "ls", {})]
    assert message.stop_reason == "length"


def test_usage_counts_thoughts_as_output_and_cached_tokens_apart() -> None:
    usage = {"promptTokenCount": 100, "cachedContentTokenCount": 30}
    usage |= {"candidatesTokenCount": 7, "thoughtsTokenCount": 20}
    message = translate([chunk({"text": "hi"}, finish="STOP", usageMetadata=usage)])
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (70, 30, 27)


def test_errors_safety_and_blocked_prompts() -> None:
    busy = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    with pytest.raises(RetryableError, match="overloaded"):
        translate([busy])
    with pytest.raises(ProviderError, match="overloaded") as caught:
        translate([chunk({"text": "x"}), busy])
    assert not isinstance(caught.value, RetryableError)
    with pytest.raises(ProviderError, match=r"finish reason SAFETY"):
        translate([chunk({"text": "x"}, finish="SAFETY")])
    with pytest.raises(ProviderError, match=r"prompt was blocked \(PROHIBITED_CONTENT\)"):
        translate([{"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}])
    with pytest.raises(ProviderError, match="before the response was complete"):
        translate([chunk({"text": "x"})])


# ---------------------------------------------------------------- the wire


async def test_a_tool_round_trip_sends_the_signature_back(llm_server: LLMServer) -> None:
    turn = Turn(thinking="List it.", tool_calls=(ToolCallSpec("ls", {"path": "."}),))
    llm_server.script(turn, Turn(text="Done."))
    provider = provider_for("gemini", llm_server, api_key="gem-key")
    try:
        context = Context("sys", [UserMessage.of("go")], [LS])
        _, first = await collect(provider.stream(MODEL, context))
        result = ToolResultMessage(first.tool_calls[0].id, "ls", [TextContent("a.py")])
        context = Context("sys", [UserMessage.of("go"), first, result], [LS])
        _, second = await collect(provider.stream(MODEL, context))
    finally:
        await provider.aclose()
    assert second.text == "Done.", second.error_message
    request = llm_server.requests[1]
    assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == "gem-key"
    assert "authorization" not in request.headers
    call = request.body["contents"][1]["parts"][-1]
    assert call == {
        "functionCall": {"name": "ls", "args": {"path": "."}},
        "thoughtSignature": signature_of(turn),
    }


async def test_a_malformed_request_is_refused_as_google_would(llm_server: LLMServer) -> None:
    provider = provider_for("gemini", llm_server, extra_body={"max_tokens": 5})
    try:
        _, message = await collect(provider.stream(MODEL, Context(None, [UserMessage.of("x")])))
    finally:
        await provider.aclose()
    assert message.error_message == (
        'gemini: HTTP 400: Invalid JSON payload received. Unknown name "max_tokens"'
    )
