"""What several providers' request builders share.

For the APIs whose tool results carry text only (Chat Completions, the Responses API,
Gemini), a tool result's images (a screenshot the read tool returned) follow all the
consecutive results in one user message, and the result's text says so; a model that takes
no images gets a note instead of the picture. And signed reasoning (encrypted reasoning items,
thought signatures) goes back only to the model that wrote it.

A tool loop sends the whole conversation with every request: a `WireMemo` keeps each message's
wire items from one request to the next, so only new messages are converted, and the body
encoder (body_json) sees the same item objects again and reuses their JSON at once. Wire items
are therefore never changed once made: a builder that merges items makes new ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from di_code.ai.transcript import messages_for_request
from di_code.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    TextContent,
    ToolResultMessage,
)

IMAGE_OMITTED = "(image omitted: this model does not accept images)"
IMAGE_FOLLOWS = "(image attached in the next message)"

Convert = Callable[[Message, list[ImageContent]], list[dict[str, Any]]]
"""One message's wire items; a tool result adds its images to the list instead."""


class _Converted(msgspec.Struct, frozen=True):
    message: Message
    """Held so that its id, the key, is not reused while the entry lives."""
    items: list[dict[str, Any]]
    images: list[ImageContent]


class WireMemo:
    """One provider's wire items of the messages of its last request, for one model (what a
    message becomes depends on the model); entries the next request does not use are dropped."""

    def __init__(self) -> None:
        self._model: Model | None = None
        self._last: dict[int, _Converted] = {}
        self._used: dict[int, _Converted] = {}

    def for_model(self, model: Model) -> WireMemo:
        """The memo, emptied if it was for another model."""
        if model != self._model:
            self._model, self._last, self._used = model, {}, {}
        return self

    def convert(self, message: Message, convert: Convert) -> _Converted:
        entry = self._last.get(id(message))
        if entry is None or entry.message is not message:
            images: list[ImageContent] = []
            entry = _Converted(message, convert(message, images), images)
        self._used[id(message)] = entry
        return entry

    def finish(self) -> None:
        self._last, self._used = self._used, {}


def wire_messages(
    messages: list[Message],
    convert: Convert,
    images_message: Callable[[list[ImageContent]], dict[str, Any]],
    memo: WireMemo | None = None,
) -> list[dict[str, Any]]:
    """What may be sent of `messages`, converted, with tool-result images after the results.
    With a `memo` (`for_model` of the model), messages it has seen are not converted again."""
    out: list[dict[str, Any]] = []
    images: list[ImageContent] = []
    for message in messages_for_request(messages):
        if not isinstance(message, ToolResultMessage) and images:
            out.append(images_message(images))
            images = []
        if memo is None:
            out.extend(convert(message, images))
        else:
            converted = memo.convert(message, convert)
            out.extend(converted.items)
            images.extend(converted.images)
    if images:
        out.append(images_message(images))
    if memo is not None:
        memo.finish()
    return out


def result_text(model: Model, message: ToolResultMessage, images: list[ImageContent]) -> str:
    """The result's text; its images go to `images` (or become a note, for a text model)."""
    texts = [part.text for part in message.content if isinstance(part, TextContent)]
    for part in message.content:
        if isinstance(part, ImageContent):
            if "image" in model.input:
                images.append(part)
                texts.append(IMAGE_FOLLOWS)
            else:
                texts.append(IMAGE_OMITTED)
    return "\n".join(texts)


def same_model(message: AssistantMessage, model: Model) -> bool:
    """Whether `model` wrote `message`: only then can it read the message's signed reasoning
    (another model's encrypted reasoning or thought signature is refused)."""
    return message.provider == model.provider and message.model == model.id
