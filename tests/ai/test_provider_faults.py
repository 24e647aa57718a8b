"""Both providers against a misbehaving server: each failure ends the way README's Reliability
says."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from di_code.ai.events import RetryEvent, StartEvent, StreamEvent, TextDeltaEvent
from di_code.ai.providers.http import MAX_REPLY_BYTES, HttpProvider, Timeouts
from di_code.ai.providers.openai import OpenAIProvider
from di_code.ai.providers.retry import RetryPolicy
from di_code.ai.stream import StreamOptions
from di_code.ai.types import AssistantMessage, Context, Model, TextContent, UserMessage
from di_code.system.abort import AbortController
from tests.support.llm_server import HttpError, LLMServer, Replay, Turn
from tests.support.streams import RecordingSleep, collect, kind_of, model_for, provider_for

KINDS = ["openai", "anthropic", "responses", "gemini"]
CONTEXT = Context("be brief", [UserMessage.of("hi")])
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FIRST_TEXT = {"openai": 2, "anthropic": 4, "responses": 4, "gemini": 1}
"""Events a Turn sends up to and including its first text delta."""
WHOLE = {
    "openai": "openai_text_then_tool.sse",
    "anthropic": "anthropic_thinking_tool.sse",
    "responses": "responses_reasoning_tool.sse",
    "gemini": "gemini_thinking_tool.sse",
}
"""A recorded reply with text and then a tool call, for each wire format."""


@pytest.fixture
def sleep() -> RecordingSleep:
    return RecordingSleep()


@pytest.fixture(params=KINDS)
async def provider(
    request: pytest.FixtureRequest, llm_server: LLMServer, sleep: RecordingSleep
) -> AsyncIterator[HttpProvider]:
    policy = RetryPolicy(sleep=sleep, jitter=lambda: 0.0)
    made = provider_for(request.param, llm_server, retry=policy, stall_timeout=0.5)
    yield made
    await made.aclose()


async def run(
    provider: HttpProvider, options: StreamOptions | None = None
) -> tuple[list[StreamEvent], AssistantMessage]:
    return await collect(provider.stream(model_for(kind_of(provider)), CONTEXT, options))


async def test_429_waits_as_long_as_retry_after_says(
    provider: HttpProvider, llm_server: LLMServer, sleep: RecordingSleep
) -> None:
    llm_server.script(
        HttpError(429, "rate limited", headers={"retry-after": "2"}),
        HttpError(429, "rate limited", headers={"retry-after-ms": "1500"}),
        Turn(text="ok"),
    )
    _, message = await run(provider)
    assert message.content == [TextContent("ok")]
    assert sleep.delays == [2.0, 1.5]
    assert len(llm_server.requests) == 3


async def test_5xx_backs_off_1_2_4_8_then_gives_up(
    provider: HttpProvider, llm_server: LLMServer, sleep: RecordingSleep
) -> None:
    llm_server.script(*[HttpError(503, "busy")] * 5)
    _, message = await run(provider)
    assert message.stop_reason == "error"
    assert message.error_message == (
        f"{kind_of(provider)}: HTTP 503: busy (gave up after 4 retries)"
    )
    assert sleep.delays == [1.0, 2.0, 4.0, 8.0]
    assert len(llm_server.requests) == 5


async def test_a_5xx_with_the_same_body_twice_is_not_retried_again(
    provider: HttpProvider, llm_server: LLMServer, sleep: RecordingSleep
) -> None:
    llm_server.script(*[HttpError(500, "7 validation errors")] * 5)
    _, message = await run(provider)
    assert message.error_message == (
        f"{kind_of(provider)}: HTTP 500: 7 validation errors "
        "(the same error twice: not retried again)"
    )
    assert sleep.delays == [1.0]
    assert len(llm_server.requests) == 2


async def test_a_5xx_whose_body_changes_is_retried(
    provider: HttpProvider, llm_server: LLMServer, sleep: RecordingSleep
) -> None:
    llm_server.script(HttpError(500, "boom 1"), HttpError(500, "boom 2"), Turn(text="ok"))
    _, message = await run(provider)
    assert message.text == "ok"
    assert sleep.delays == [1.0, 2.0]


async def test_the_service_message_is_kept_whole_and_a_raw_body_is_cut(
    provider: HttpProvider, llm_server: LLMServer
) -> None:
    explained = "x" * 700 + " the field content must be a string"
    fastapi = '{"detail": [{"msg": "Input should be a valid string"}, {"msg": "Field required"}]}'
    llm_server.script(
        HttpError(400, explained), HttpError(422, body=fastapi), HttpError(404, body="y" * 900)
    )
    messages = [(await run(provider))[1].error_message or "" for _ in range(3)]
    assert messages[0].endswith(" the field content must be a string")
    assert messages[1].endswith("HTTP 422: Input should be a valid string; Field required")
    assert messages[2] == f"{kind_of(provider)}: HTTP 404: " + "y" * 500


@pytest.mark.parametrize("status", [408, 409, 503, 529])
async def test_other_retryable_statuses(
    provider: HttpProvider, llm_server: LLMServer, sleep: RecordingSleep, status: int
) -> None:
    llm_server.script(
        HttpError(status, "Overloaded", error_type="overloaded_error"), Turn(text="x")
    )
    _, message = await run(provider)
    assert message.stop_reason == "stop"
    assert sleep.delays == [1.0]


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_client_errors_are_not_retried_and_name_provider_status_and_message(
    provider: HttpProvider, llm_server: LLMServer, sleep: RecordingSleep, status: int
) -> None:
    llm_server.script(HttpError(status, "Incorrect API key provided"))
    _, message = await run(provider)
    assert message.stop_reason == "error"
    assert (
        message.error_message == f"{kind_of(provider)}: HTTP {status}: Incorrect API key provided"
    )
    assert sleep.delays == []
    assert len(llm_server.requests) == 1


async def test_the_api_key_never_appears_in_the_error(
    provider: HttpProvider, llm_server: LLMServer
) -> None:
    llm_server.script(HttpError(401, "Incorrect API key provided: sk-test. Check it."))
    _, message = await run(provider)
    assert message.error_message is not None
    assert "sk-test" not in message.error_message
    assert "***" in message.error_message


async def test_retry_after_over_60_s_fails_at_once_and_says_so(
    provider: HttpProvider, llm_server: LLMServer, sleep: RecordingSleep
) -> None:
    llm_server.script(HttpError(429, "quota", headers={"retry-after": "120"}))
    _, message = await run(provider)
    assert message.error_message is not None
    assert "HTTP 429: quota" in message.error_message
    assert "120 s, over the 60 s limit" in message.error_message
    assert sleep.delays == []


async def test_an_error_body_that_is_not_json_is_quoted_on_one_line(
    provider: HttpProvider, llm_server: LLMServer
) -> None:
    llm_server.script(HttpError(404, body="<html>\n  Not here\n</html>"))
    _, message = await run(provider)
    assert message.error_message == f"{kind_of(provider)}: HTTP 404: <html> Not here </html>"


async def test_json_instead_of_a_stream_is_an_error(
    provider: HttpProvider, llm_server: LLMServer
) -> None:
    llm_server.script(HttpError(200, body='{"error": {"message": "streaming unsupported"}}'))
    _, message = await run(provider)
    assert message.error_message == (
        f"{kind_of(provider)}: expected an event stream, got: streaming unsupported"
    )


async def test_connection_refused_is_retried_then_reported(sleep: RecordingSleep) -> None:
    closed = LLMServer().start()
    closed.close()
    policy = RetryPolicy(sleep=sleep, jitter=lambda: 0.0)
    for kind in KINDS:
        provider = provider_for(kind, closed, retry=policy)
        _, message = await run(provider)
        await provider.aclose()
        assert message.error_message is not None
        assert message.error_message.startswith(f"{kind}: connection to {closed.url}/")
        assert "failed" in message.error_message
        assert message.error_message.endswith("(gave up after 4 retries)")
    assert len(sleep.delays) == 4 * len(KINDS)


async def test_a_url_without_a_scheme_fails_at_once(sleep: RecordingSleep) -> None:
    policy = RetryPolicy(sleep=sleep)
    provider = OpenAIProvider(api_key=None, base_url="localhost:1/v1", retry=policy)
    _, message = await run(provider)
    await provider.aclose()
    assert message.error_message is not None
    assert message.error_message.startswith("openai: cannot reach localhost:1/v1/chat/completions")
    assert sleep.delays == []


async def test_drop_mid_stream_keeps_the_partial_text_and_is_not_retried(
    provider: HttpProvider, llm_server: LLMServer
) -> None:
    turn = Turn(
        text="partial answer", chunk_size=8, fault="drop", fault_after=FIRST_TEXT[kind_of(provider)]
    )
    llm_server.script(turn)
    events, message = await run(provider)
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert message.error_message.startswith(f"{kind_of(provider)}: ")
    assert message.text == "partial "
    assert len(llm_server.requests) == 1
    assert any(isinstance(e, TextDeltaEvent) for e in events)


async def test_malformed_chunk_ends_in_error_keeping_the_text(
    provider: HttpProvider, llm_server: LLMServer
) -> None:
    llm_server.script(
        Turn(
            text="abcdefgh",
            chunk_size=4,
            fault="malformed",
            fault_after=FIRST_TEXT[kind_of(provider)],
        )
    )
    _, message = await run(provider)
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert "malformed stream" in message.error_message
    assert message.text == "abcd"


async def test_a_stalled_stream_is_an_error_keeping_the_text(
    provider: HttpProvider, llm_server: LLMServer
) -> None:
    turn = Turn(
        text="abcdefgh", chunk_size=4, fault="stall", fault_after=FIRST_TEXT[kind_of(provider)]
    )
    llm_server.script(turn)
    _, message = await run(provider)
    assert message.stop_reason == "error"
    assert message.error_message == f"{kind_of(provider)}: stream stalled (no data for 0.5 s)"
    assert message.text == "abcd"
    assert llm_server.wait_disconnects(1)


async def test_the_wait_for_the_first_byte_is_its_own_longer_limit(
    llm_server: LLMServer,
) -> None:
    made = provider_for("openai", llm_server, stall_timeout=0.2, first_byte_timeout=0.6)
    llm_server.script(
        Turn(text="slow start", first_delay=0.3),
        Turn(text="abcdefgh", fault="stall", fault_after=0),
    )
    try:
        _, first = await run(made)  # nothing for 0.3 s: under the first-byte limit
        _, second = await run(made)
    finally:
        await made.aclose()
    assert first.text == "slow start"
    assert second.error_message == "openai: stream stalled (no reply for 0.6 s)"


def test_a_local_server_gets_a_longer_first_byte_wait_by_default() -> None:
    local = Timeouts.for_url("http://127.0.0.1:8080/v1")
    remote = Timeouts.for_url("https://api.openai.com/v1")
    assert local.first_byte > remote.first_byte == local.stall == remote.stall
    assert Timeouts.for_url("http://localhost:1", first_byte=5, stall=7) == Timeouts(5, 7)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_gzip_bomb_stops_at_the_reply_cap(
    kind: str, llm_server: LLMServer, tmp_path: Path
) -> None:
    bomb = tmp_path / "bomb.sse"
    # many short comment lines, none an event: with a stall limit longer than reading 64 MB
    # takes on a busy machine, only the size cap can stop them
    line = b": " + b"a" * 1022 + b"\n"
    bomb.write_bytes(gzip.compress(line * (MAX_REPLY_BYTES // len(line) + 1)))
    llm_server.script(Replay(str(bomb), headers={"content-encoding": "gzip"}))
    provider = provider_for(kind, llm_server, stall_timeout=60)
    try:
        _, message = await run(provider)
    finally:
        await provider.aclose()
    assert message.error_message == f"{kind}: the reply is larger than 64 MB; stopped reading"


async def test_a_stream_cut_before_the_stop_reason_is_an_error(
    provider: HttpProvider, llm_server: LLMServer, tmp_path: Path
) -> None:
    data = (FIXTURES / WHOLE[kind_of(provider)]).read_bytes()
    truncated = tmp_path / "cut.sse"
    truncated.write_bytes(data[: data.index(b"tool") + 200])  # ends cleanly, no stop reason
    llm_server.script(Replay(str(truncated)))
    _, message = await run(provider)
    assert message.error_message == (
        f"{kind_of(provider)}: stream ended before the response was complete"
    )
    assert message.text  # the finished text block survives


async def test_abort_mid_stream_ends_aborted_and_closes_the_connection(
    provider: HttpProvider, llm_server: LLMServer
) -> None:
    turn = Turn(
        text="abcdefgh", chunk_size=4, fault="stall", fault_after=FIRST_TEXT[kind_of(provider)]
    )
    llm_server.script(turn)
    controller = AbortController()
    stream = provider.stream(
        model_for(kind_of(provider)), CONTEXT, StreamOptions(signal=controller.signal)
    )
    events = []
    async for event in stream:
        events.append(event)
        if isinstance(event, TextDeltaEvent):
            controller.abort()
    message = await asyncio.wait_for(stream.result(), 5)
    assert message.stop_reason == "aborted"
    assert message.text == "abcd"
    assert await asyncio.to_thread(llm_server.wait_disconnects, 1)


async def test_abort_during_backoff_ends_at_once(llm_server: LLMServer) -> None:
    entered = asyncio.Event()

    async def forever(_seconds: float) -> None:
        entered.set()
        await asyncio.Event().wait()

    llm_server.script(HttpError(503, "busy"), Turn(text="never"))
    provider = provider_for("openai", llm_server, retry=RetryPolicy(sleep=forever))
    controller = AbortController()
    stream = provider.stream(model_for("openai"), CONTEXT, StreamOptions(signal=controller.signal))
    await asyncio.wait_for(entered.wait(), 5)
    controller.abort()
    _, message = await asyncio.wait_for(collect(stream), 5)
    await provider.aclose()
    assert message.stop_reason == "aborted"
    assert len(llm_server.requests) == 1


async def test_pre_aborted_sends_nothing(provider: HttpProvider, llm_server: LLMServer) -> None:
    controller = AbortController()
    controller.abort()
    events, message = await run(provider, StreamOptions(signal=controller.signal))
    assert isinstance(events[0], StartEvent) and len(events) == 2
    assert message.stop_reason == "aborted"
    assert llm_server.requests == []


async def test_anthropic_overloaded_event_before_content_is_retried(
    llm_server: LLMServer, sleep: RecordingSleep
) -> None:
    llm_server.script(Replay(str(FIXTURES / "anthropic_overloaded.sse")), Turn(text="fine"))
    provider = provider_for("anthropic", llm_server, retry=RetryPolicy(sleep=sleep))
    _, message = await run(provider)
    await provider.aclose()
    assert message.text == "fine"
    assert len(sleep.delays) == 1


async def test_anthropic_error_event_after_content_is_final(
    llm_server: LLMServer, sleep: RecordingSleep, tmp_path: Path
) -> None:
    whole = (FIXTURES / "anthropic_thinking_tool.sse").read_bytes()
    error = b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
    error += b'"message": "Overloaded"}}\n\n'
    transcript = tmp_path / "late_error.sse"
    transcript.write_bytes(whole[: whole.index(b"event: content_block_start", 1500)] + error)
    llm_server.script(Replay(str(transcript)))
    provider = provider_for("anthropic", llm_server, retry=RetryPolicy(sleep=sleep))
    _, message = await run(provider)
    await provider.aclose()
    assert message.error_message == "anthropic: overloaded_error: Overloaded"
    assert message.text == "Listing now ✓."
    assert sleep.delays == []


async def test_the_error_names_the_preset_the_model_comes_from(llm_server: LLMServer) -> None:
    llm_server.script(HttpError(401, "Invalid API Key"))
    groq = provider_for("openai", llm_server)
    model = Model("llama-3.3-70b", "Llama", "groq", "openai-completions")
    try:
        _, message = await collect(groq.stream(model, CONTEXT))
    finally:
        await groq.aclose()
    assert message.error_message == "groq: HTTP 401: Invalid API Key"


async def test_each_backoff_is_reported_as_a_retry_event_before_any_content(
    provider: HttpProvider, llm_server: LLMServer
) -> None:
    llm_server.script(
        HttpError(500, "boom"),
        HttpError(429, "slow down", headers={"retry-after": "2"}),
        Turn(text="ok"),
    )
    events, message = await run(provider)
    assert message.content == [TextContent("ok")]
    retries = [event for event in events if isinstance(event, RetryEvent)]
    assert [(r.attempt, r.max_retries, r.delay) for r in retries] == [(1, 4, 1.0), (2, 4, 2.0)]
    assert retries[0].reason == "HTTP 500: boom"
    assert retries[1].reason == "HTTP 429: slow down"
    assert [event.type for event in events[:3]] == ["start", "retry", "retry"]
