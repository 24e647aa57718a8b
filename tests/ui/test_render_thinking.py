"""Thinking blocks with nothing to show are not drawn."""

from __future__ import annotations

from di_code.ai import TextContent, ThinkingContent
from tests.ui.test_render import render_prompt


async def test_a_thinking_block_without_text_is_not_drawn() -> None:
    """The Responses API's encrypted reasoning arrives as a thinking block with no summary."""
    reply = {"type": "success", "content": [ThinkingContent("", "{}"), TextContent("Hi.")]}
    lines = await render_prompt([reply], [])
    assert "Hi." in "\n".join(lines)
    assert "✻ thinking" not in "\n".join(lines)
