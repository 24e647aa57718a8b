"""Context-overflow errors in each provider's own words are recognised; others are not."""

from __future__ import annotations

import pytest

from di_code.ai.overflow import is_context_overflow
from di_code.ai.types import AssistantMessage, StopReason


def failed(text: str, reason: StopReason = "error") -> AssistantMessage:
    return AssistantMessage([], "p", "m", stop_reason=reason, error_message=text)


@pytest.mark.parametrize(
    "text",
    [
        "openai: HTTP 400: This model's maximum context length is 8192 tokens. However, your "
        "messages resulted in 9000 tokens.",
        "openai: HTTP 400: context_length_exceeded",
        "anthropic: HTTP 400: prompt is too long: 208000 tokens > 200000 maximum",
        "anthropic: HTTP 400: input length and `max_tokens` exceed context limit: 190000 + 20000",
        "google: HTTP 400: The input token count (1200000) exceeds the maximum number of tokens "
        "allowed (1048576).",
        "llamacpp: HTTP 400: the request exceeds the available context size, try increasing it",
        "mistral: HTTP 400: Prompt contains 40000 tokens, too large for model with 32768 maximum "
        "context length",
        "xai: HTTP 400: This model's maximum prompt length is 131072 but the request contains 1",
        "groq: HTTP 400: Please reduce the length of the messages or completion.",
        "openai: HTTP 413: Request Entity Too Large",
    ],
)
def test_overflow_messages_are_recognised(text: str) -> None:
    assert is_context_overflow(failed(text))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("openai: HTTP 401: Incorrect API key provided", "error"),
        ("openai: HTTP 429: Rate limit reached for requests", "error"),
        ("stream stalled", "error"),
        ("prompt is too long", "aborted"),
    ],
)
def test_other_failures_are_not_overflow(text: str, reason: StopReason) -> None:
    assert not is_context_overflow(failed(text, reason))
