"""What several providers' request builders share.

For the APIs whose tool results carry text only (Chat Completions, the Responses API,
Gemini), a tool result's images (a screenshot the read tool returned) follow all the
consecutive results in one user message, and the result's text says so; a model that takes
no images gets a note instead of the picture. And signed reasoning (encrypted reasoning items,
thought signatures) goes back only to the model that wrote it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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


def wire_messages(
    messages: list[Message],
    convert: Convert,
    images_message: Callable[[list[ImageContent]], dict[str, Any]],
) -> list[dict[str, Any]]:
    """What may be sent of `messages`, converted, with tool-result images after the results."""
    out: list[dict[str, Any]] = []
    images: list[ImageContent] = []
    for message in messages_for_request(messages):
        if not isinstance(message, ToolResultMessage) and images:
            out.append(images_message(images))
            images = []
        out.extend(convert(message, images))
    if images:
        out.append(images_message(images))
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
