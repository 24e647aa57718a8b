"""A saved conversation as the things a reader sees, in order: prompts, answers, thinking,
tool calls with their results, and the marks (an error, an abort, a compaction, a model
change). The HTML and Markdown exports both draw these, so the two cannot disagree about
what a conversation holds.

Each tool call is paired with its result by id; its title is the chat's own
(`tool_view.summarize_call`). Texts are kept as they were: the renderers escape them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

from di_code.ai.types import (
    AssistantMessage,
    Message,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from di_code.session.format import CompactionEntry, Entry, MessageEntry, ModelChangeEntry
from di_code.ui.render import user_text
from di_code.ui.tool_view import (
    nested_calls,
    nested_state,
    output_lines,
    status_line,
    summarize_call,
)


@dataclass(frozen=True, slots=True)
class Prompt:
    text: str


@dataclass(frozen=True, slots=True)
class Reply:
    text: str


@dataclass(frozen=True, slots=True)
class Thinking:
    text: str


@dataclass(frozen=True, slots=True)
class ToolPanel:
    """One call: `title` is what it does (the chat's panel title), `arguments` its JSON,
    `result` None while no result was saved (the call was cut off)."""

    name: str
    title: str
    arguments: str
    result: str | None = None
    diff: str | None = None
    is_error: bool = False
    status: str | None = None
    nested: tuple[str, ...] = ()
    """A subagent's calls: `done read app.py`."""


@dataclass(frozen=True, slots=True)
class Mark:
    """Something that happened to the conversation rather than in it."""

    kind: Literal["error", "aborted", "compaction", "model"]
    text: str


Item = Prompt | Reply | Thinking | ToolPanel | Mark


def conversation_items(entries: Iterable[Entry | Message]) -> list[Item]:
    """The items of a session's branch (or of a chat's messages when nothing is saved)."""
    items: list[Item] = []
    calls: dict[str, int] = {}  # tool call id -> index of its panel in items
    for entry in entries:
        if isinstance(entry, MessageEntry):
            _add_message(items, calls, entry.message)
        elif isinstance(entry, CompactionEntry):
            text = f"Compacted {entry.tokens_before} tokens into a summary:\n{entry.summary}"
            items.append(Mark("compaction", text))
        elif isinstance(entry, ModelChangeEntry):
            items.append(Mark("model", f"Model: {entry.provider}/{entry.model_id}"))
        elif isinstance(entry, UserMessage | AssistantMessage | ToolResultMessage):
            _add_message(items, calls, entry)  # a chat's messages, nothing saved
    return items


def _add_message(items: list[Item], calls: dict[str, int], message: Message) -> None:
    if isinstance(message, AssistantMessage):
        for block in message.content:
            if isinstance(block, ThinkingContent) and block.thinking.strip():
                items.append(Thinking(block.thinking))
            elif isinstance(block, ToolCall):
                calls[block.id] = len(items)
                items.append(_call_panel(block.name, block.arguments))
            elif block.type == "text" and block.text.strip():
                items.append(Reply(block.text))
        if message.stop_reason == "error":
            items.append(Mark("error", message.error_message or "The model's answer failed."))
        elif message.stop_reason == "aborted":
            items.append(Mark("aborted", message.error_message or "Stopped by the user."))
    elif isinstance(message, ToolResultMessage):
        at = calls.pop(message.tool_call_id, None)
        panel = items[at] if at is not None else None
        if at is not None and isinstance(panel, ToolPanel):
            items[at] = _with_result(panel, message)
        else:  # a result whose call was not saved
            items.append(_with_result(_call_panel(message.tool_name, None), message))
    else:
        items.append(Prompt(user_text(message)))


def _call_panel(name: str, arguments: Any) -> ToolPanel:
    shown = json.dumps(arguments, ensure_ascii=False, indent=2) if arguments is not None else ""
    return ToolPanel(name, summarize_call(name, arguments), shown)


def _with_result(panel: ToolPanel, result: ToolResultMessage) -> ToolPanel:
    details = result.details if isinstance(result.details, dict) else {}
    diff = details.get("diff")
    nested = tuple(
        f"{nested_state(call)} {call.get('name', '?')} "
        f"{summarize_call(str(call.get('name', '?')), call.get('arguments'))}"
        for call in nested_calls(result.details) or []
    )
    return replace(
        panel,
        result="\n".join(output_lines(result)),
        diff=diff if isinstance(diff, str) and diff else None,
        is_error=result.is_error,
        status=status_line(result, None),
        nested=nested,
    )
