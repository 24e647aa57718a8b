"""An editor's prompt blocks as di-code user content.

Text is text; an image is an image; an embedded resource (an `@file` mention, with the
editor's text of it, which may be unsaved) is quoted in full so the model does not re-read a
stale file; a resource link names the file for the model to read itself.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from di_code.ai.types import ImageContent, TextContent, UserContent


def user_content(blocks: list[Any]) -> list[UserContent]:
    content: list[UserContent] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            content.append(TextContent(block.text))
        elif isinstance(block, ImageContentBlock):
            content.append(ImageContent(block.data, block.mime_type))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                where = _path_of(resource.uri)
                content.append(TextContent(f'<file path="{where}">\n{resource.text}\n</file>'))
        elif isinstance(block, ResourceContentBlock):
            content.append(TextContent(f"[{block.name}]({_path_of(block.uri)})"))
    return content


def prompt_text(blocks: list[Any]) -> str:
    """The prompt's own words (not the files it quotes): what a slash command is read from."""
    return "".join(block.text for block in blocks if isinstance(block, TextContentBlock))


def _path_of(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri
