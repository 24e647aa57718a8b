"""Drain a provider stream, checking every event against the stream's sequence rules."""

from __future__ import annotations

from typing import Any

from di_code.ai.events import StreamEvent
from di_code.ai.providers.anthropic import AnthropicProvider
from di_code.ai.providers.google import GoogleProvider
from di_code.ai.providers.http import HttpProvider
from di_code.ai.providers.openai import OpenAIProvider
from di_code.ai.providers.openai_responses import OpenAIResponsesProvider
from di_code.ai.stream import AssistantMessageStream
from di_code.ai.types import AssistantMessage, Model
from tests.support.event_sequence import check_event_sequence
from tests.support.llm_server import LLMServer

API = {
    "openai": "openai-completions",
    "anthropic": "anthropic-messages",
    "responses": "openai-responses",
    "gemini": "google-generative-ai",
}
_CLASSES: dict[str, type[HttpProvider]] = {
    "responses": OpenAIResponsesProvider,  # before its base class: kind_of tries in order
    "openai": OpenAIProvider,
    "anthropic": AnthropicProvider,
    "gemini": GoogleProvider,
}


def provider_for(kind: str, server: LLMServer, **options: Any) -> HttpProvider:
    """A provider of the given wire format pointed at the loopback server."""
    options.setdefault("api_key", "sk-test")
    openai_like = kind in ("openai", "responses")
    base_url = server.openai_base_url if openai_like else server.anthropic_base_url
    return _CLASSES[kind](base_url=base_url, **options)


def kind_of(provider: HttpProvider) -> str:
    """The wire format a provider speaks: "openai", "anthropic", "responses" or "gemini"."""
    return next(kind for kind, cls in _CLASSES.items() if isinstance(provider, cls))


def model_for(kind: str, **fields: Any) -> Model:
    return Model(fields.pop("id", "test-model"), "Test", kind, API[kind], **fields)


async def collect(stream: AssistantMessageStream) -> tuple[list[StreamEvent], AssistantMessage]:
    events = [event async for event in stream]
    check_event_sequence(events)
    return events, await stream.result()


class RecordingSleep:
    """A backoff sleep that records the delays and returns at once (no real seconds)."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
