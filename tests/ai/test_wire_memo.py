"""A provider converts each message of a growing conversation once (request_shared.WireMemo).

The body built with the memo is always the body built without it; the items of messages the
last request already held are the same objects again (which is what lets the body encoder
reuse their JSON); a new model, whose wire items may differ, converts everything afresh.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from di_code.ai.providers.google import build_google_request
from di_code.ai.providers.openai import build_openai_request
from di_code.ai.providers.openai_responses import build_responses_request
from di_code.ai.providers.request_shared import WireMemo
from di_code.ai.stream import StreamOptions
from di_code.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tests.support.streams import model_for

Builder = Callable[[Model, Context, StreamOptions, WireMemo | None], dict[str, Any]]
BUILDERS: dict[str, tuple[str, str, Builder]] = {
    "openai": ("openai", "messages", build_openai_request),
    "responses": ("openai", "input", build_responses_request),
    "gemini": ("gemini", "contents", build_google_request),
}
SEEING = frozenset({"text", "image"})


def turn(n: int, images: bool = False) -> list[Message]:
    """One tool turn: a call of two reads and both results (the second an image, maybe)."""
    calls = [ToolCall(f"c{n}a", "read", {"path": "a"}), ToolCall(f"c{n}b", "read", {"n": n})]
    second: list[TextContent | ImageContent] = (
        [ImageContent("QUJD", "image/png")] if images else [TextContent(f"b{n}")]
    )
    return [
        AssistantMessage([TextContent("reading"), *calls], "openai", "m", stop_reason="tool_use"),
        ToolResultMessage(f"c{n}a", "read", [TextContent(f"line {n}\n" * 50)]),
        ToolResultMessage(f"c{n}b", "read", second),
    ]


@pytest.mark.parametrize("kind", BUILDERS)
def test_with_the_memo_the_body_is_the_same_and_old_items_are_reused(kind: str) -> None:
    provider, key, build = BUILDERS[kind]
    model = model_for(provider, input=SEEING)
    memo = WireMemo()
    messages: list[Message] = [UserMessage.of("go")]
    previous: list[Any] = []
    for n in range(4):
        messages += turn(n, images=n == 1)
        context = Context("sys", list(messages))
        body = build(model, context, StreamOptions(), memo)
        assert body == build(model, context, StreamOptions(), None)
        items = body[key]
        fresh = [item for item in items if not any(item is old for old in previous)]
        if n and kind != "gemini":  # Gemini merges the results of a turn into a new item
            assert len(fresh) <= 6  # a system prompt, the turn's items and an image message
        assert not n or any(item is old for item in items for old in previous)
        previous = items


@pytest.mark.parametrize("kind", BUILDERS)
def test_another_model_converts_everything_again(kind: str) -> None:
    provider, key, build = BUILDERS[kind]
    memo = WireMemo()
    context = Context("sys", [UserMessage.of("go"), *turn(0, images=True)])
    seeing = build(model_for(provider, input=SEEING), context, StreamOptions(), memo)
    blind_model = model_for(provider)
    blind = build(blind_model, context, StreamOptions(), memo)
    assert blind == build(blind_model, context, StreamOptions(), None)
    assert blind[key] != seeing[key]  # the picture became a note
