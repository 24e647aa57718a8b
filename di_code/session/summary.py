"""The words of compaction: the summary request sent to the model and the summary message.

The conversation to summarize is sent as plain text inside one user message (not as the
original messages), so the summary request needs no tools and works with any provider; long
tool outputs are cut, and a conversation that would not fit is cut in the middle.
"""

from __future__ import annotations

import json

from di_code.ai.transcript import messages_for_request
from di_code.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

SUMMARY_PREFIX = "The earlier part of this conversation was compacted into this summary:"
TOOL_OUTPUT_LIMIT = 2000

SUMMARY_SYSTEM_PROMPT = (
    "You write the working memory of a coding assistant. The conversation below will be "
    "replaced by your summary, and the assistant will continue the work from the summary "
    "alone, so keep every fact it needs: exact file paths, function names, commands, error "
    "messages, values the user gave. Do not continue the conversation and do not call tools."
)

SUMMARY_SECTIONS = """Summarize the conversation above with exactly these sections:

## Goal
What the user wants overall.
## Constraints
Requirements, preferences and limits the user stated.
## Progress
What is done, what is in progress, what failed and why.
## Decisions
Choices made and their reasons.
## Next steps
What remains, in order.
## Files read and changed
Each path, and what was read in it or changed in it."""


def summary_message(summary: str, timestamp: int) -> UserMessage:
    """How a summary enters the context: a user message that says what it is."""
    return UserMessage(
        [TextContent(f"{SUMMARY_PREFIX}\n\n<summary>\n{summary}\n</summary>")], timestamp
    )


def is_summary_message(message: Message) -> bool:
    return (
        isinstance(message, UserMessage)
        and bool(message.content)
        and isinstance(message.content[0], TextContent)
        and message.content[0].text.startswith(SUMMARY_PREFIX)
    )


def summary_request(messages: list[Message], instructions: str | None, max_chars: int) -> str:
    """The user message that asks for the summary of `messages`."""
    conversation = _fit(serialize(messages), max_chars)
    extra = f"\n\nAlso follow these instructions: {instructions.strip()}" if instructions else ""
    return f"<conversation>\n{conversation}\n</conversation>\n\n{SUMMARY_SECTIONS}{extra}"


def serialize(messages: list[Message]) -> str:
    """The conversation as labelled plain text, failed turns left out, tool output cut."""
    return "\n\n".join(_render(message) for message in messages_for_request(messages))


def _render(message: Message) -> str:
    match message:
        case UserMessage(content=content):
            return "[User]: " + " ".join(_block_text(block) for block in content)
        case AssistantMessage(content=content):
            return "\n".join(_assistant_block(block) for block in content)
        case ToolResultMessage(tool_name=name, content=content, is_error=is_error):
            text = _cut(" ".join(_block_text(block) for block in content), TOOL_OUTPUT_LIMIT)
            label = "Tool error" if is_error else "Tool result"
            return f"[{label} {name}]: {text}"


def _assistant_block(block: TextContent | ThinkingContent | ToolCall) -> str:
    match block:
        case TextContent(text=text):
            return f"[Assistant]: {text}"
        case ThinkingContent(thinking=thinking):
            return f"[Assistant thinking]: {_cut(thinking, TOOL_OUTPUT_LIMIT)}"
        case ToolCall(name=name, arguments=arguments):
            return f"[Assistant tool call]: {name} {json.dumps(arguments, ensure_ascii=False)}"


def _block_text(block: TextContent | ImageContent) -> str:
    return block.text if isinstance(block, TextContent) else "[image]"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters cut]"


def _fit(text: str, max_chars: int) -> str:
    """Keep the start (an earlier summary, the goal) and the end; drop the middle."""
    if len(text) <= max_chars:
        return text
    half = max(max_chars // 2, 1)
    omitted = len(text) - 2 * half
    return (
        f"{text[:half]}\n\n[... {omitted} characters of conversation omitted ...]\n\n{text[-half:]}"
    )
