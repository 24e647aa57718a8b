"""Drain a provider stream, checking every event against the SPEC §2.2 sequence rules."""

from __future__ import annotations

from typing import Any

from di_code.ai.event_sequence import check_event_sequence
from di_code.ai.events import StreamEvent
from di_code.ai.providers.anthropic import AnthropicProvider
from di_code.ai.providers.http import HttpProvider
from di_code.ai.providers.openai import OpenAIProvider
from di_code.ai.stream import AssistantMessageStream
from di_code.ai.types import AssistantMessage, Model
from tests.support.llm_server import LLMServer

API = {"openai": "openai-completions", "anthropic": "anthropic-messages"}


def provider_for(kind: str, server: LLMServer, **options: Any) -> HttpProvider:
    """An OpenAI or Anthropic provider pointed at the loopback server."""
    options.setdefault("api_key", "sk-test")
    if kind == "openai":
        return OpenAIProvider(base_url=server.openai_base_url, **options)
    return AnthropicProvider(base_url=server.anthropic_base_url, **options)


def kind_of(provider: HttpProvider) -> str:
    """The wire format a provider speaks: "openai" or "anthropic"."""
    return "openai" if isinstance(provider, OpenAIProvider) else "anthropic"


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
