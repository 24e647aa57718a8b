"""AgentEvents as ACP session updates: streamed text and thinking, tool calls with their
kind, locations and outcome, and for write and edit a diff the editor can show."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import helpers
from acp.schema import ToolCallLocation, ToolKind

from di_code.acp.previews import PreviewOf
from di_code.agent.events import (
    AgentEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
)
from di_code.agent.tool import call_arguments
from di_code.ai.events import TextDeltaEvent, ThinkingDeltaEvent
from di_code.ai.types import (
    AssistantMessage,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from di_code.system.names import escape_name
from di_code.system.safe_text import visible
from di_code.tools.builtin.todo import todos_of
from di_code.tools.policy.modes import PLAN_TOOL

KINDS: dict[str, ToolKind] = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "bash": "execute",
    "grep": "search",
    "find": "search",
    "ls": "search",
    "task": "think",
    PLAN_TOOL: "think",
}
FILE_TOOLS = ("read", "write", "edit")
EDIT_TOOLS = ("write", "edit")
SHOWN_WHILE_RUNNING = ("task",)
"""Tools whose partial results the editor is sent: a subagent's calls so far, a line each
(a command's output reaches the editor through its terminal, or whole at the end)."""


def tool_kind(name: str) -> ToolKind:
    return KINDS.get(name, "other")


def tool_title(name: str, arguments: Any) -> str:
    """What the editor shows for the call: the command for bash, the text job_input types,
    the path or pattern else, a plan's first line. A path (and a typed text) is shown as the
    tools' output names files (`escape_name`): a newline or an escape sequence in a file name
    must not forge a line of the title the editor asks permission under. The whole title is
    then `visible`, as chat shows it: a bidi override or a zero-width character must not
    make it read otherwise than it is."""
    return visible(_raw_title(name, arguments))


def _raw_title(name: str, arguments: Any) -> str:
    if name == PLAN_TOOL and isinstance(arguments, dict):
        first = next((s for s in str(arguments.get("plan", "")).splitlines() if s.strip()), "")
        return f"Plan: {first.strip()}" if first else "Plan"
    if name == "job_input" and isinstance(arguments, dict):
        # the text it would type is what the user approves: on one line, every control
        # character written out, so a typed escape or carriage return cannot hide a line
        typed = escape_name(str(arguments.get("text", "")))
        return f"job_input {arguments.get('job_id')}: {typed}"
    if isinstance(arguments, dict):
        for key in ("command", "path", "pattern", "description"):
            value = arguments.get(key)
            if isinstance(value, str) and value:
                if key == "command":
                    return value
                return f"{name}: {escape_name(value) if key == 'path' else value}"
    return name


def note_text(text: str) -> str:
    """A note of di-code's to the user (a job's end and its last lines, a set-up's warning),
    as the editor is sent it: what came from elsewhere in it (a command, a program's output)
    has its control characters written out, line by line, so an escape sequence cannot act
    in the editor's view, nor a bidi override make a line read otherwise than it is."""
    text = "\n".join(visible(escape_name(line)) for line in text.split("\n"))
    said = text if text.startswith("di-code: ") else f"di-code: {text}"
    return said + "\n"


def tool_locations(workspace: Path, name: str, arguments: Any) -> list[ToolCallLocation] | None:
    """Where a call works, for the editor to follow: the file a read, write or edit names
    (`arguments` in the tool's own names), and the line a read starts at."""
    raw = arguments.get("path") if isinstance(arguments, dict) else None
    if name not in FILE_TOOLS or not isinstance(raw, str) or not raw:
        return None
    line = _read_from(arguments) if name == "read" else None
    return [ToolCallLocation(path=str(workspace / raw), line=line)]


@dataclass
class EventTranslator:
    """Turns one session's AgentEvents into updates; remembers each edited file's text as it
    was when its call started, so the end of the call can send the diff."""

    workspace: Path
    preview: PreviewOf | None = None
    """A file's text for a diff (acp.previews: through the file opener, confined)."""
    before: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Per tool call id of a write or edit: the path as the model gave it, the old text."""

    async def updates(self, event: AgentEvent) -> list[Any]:
        if isinstance(event, MessageUpdateEvent):
            inner = event.event
            if isinstance(inner, TextDeltaEvent):
                return [helpers.update_agent_message_text(inner.delta)]
            if isinstance(inner, ThinkingDeltaEvent):
                return [helpers.update_agent_thought_text(inner.delta)]
            return []
        if isinstance(event, ToolExecutionStartEvent):
            call_id, name, arguments = event.tool_call_id, event.tool_name, event.arguments
            raw = arguments.get("path") if isinstance(arguments, dict) else None
            if name in EDIT_TOOLS and isinstance(raw, str) and raw and self.preview is not None:
                found = await self.preview(raw)
                if found is not None:
                    self.before[call_id] = (raw, found[1])
            return [self._started(call_id, name, arguments)]
        if isinstance(event, ToolExecutionUpdateEvent):
            if event.tool_name not in SHOWN_WHILE_RUNNING:
                return []
            text = event.partial_result.text
            content = [helpers.tool_content(helpers.text_block(text))] if text else []
            return [helpers.update_tool_call(event.tool_call_id, content=content)]
        if isinstance(event, ToolExecutionEndEvent):
            edited = self.before.pop(event.result.tool_call_id, None)
            shown, located = _terminal(event.result), None
            if edited is not None and not event.result.is_error and self.preview is not None:
                raw, old = edited
                found = await self.preview(raw)
                if found is not None and found[1] is not None:
                    where, new = str(found[0]), found[1]
                    shown = helpers.tool_diff_content(where, new, old)
                    located = [ToolCallLocation(path=where, line=first_change(old or "", new))]
            return [self._ended(event.result, shown, located), *_plan(event.result)]
        return []

    def _started(self, call_id: str, name: str, arguments: Any) -> Any:
        return helpers.start_tool_call(
            call_id,
            tool_title(name, arguments),
            kind=tool_kind(name),
            status="in_progress",
            locations=tool_locations(self.workspace, name, arguments),
            raw_input=arguments,
        )

    def _ended(
        self, result: ToolResultMessage, shown: Any = None, located: list[Any] | None = None
    ) -> Any:
        """The call's outcome: its text, and what the editor shows best (an edit's diff, at
        the first line it changed), or only the editor's terminal, which shows the command's
        output itself."""
        content: list[Any] = []
        if shown is None or shown.type != "terminal":
            content = [
                helpers.tool_content(helpers.text_block(block.text))
                for block in result.content
                if isinstance(block, TextContent) and block.text
            ]
        if shown is not None:
            content.append(shown)
        return helpers.update_tool_call(
            result.tool_call_id,
            status="failed" if result.is_error else "completed",
            content=content,
            locations=located,
        )

    def replay(self, messages: list[Message], tools: Iterable[Any] = ()) -> list[Any]:
        """A stored conversation as the updates that would have shown it (session/load); each
        call in its tool's own argument names, as when it ran."""
        out: list[Any] = []
        for message in messages:
            if isinstance(message, UserMessage):
                out += [
                    helpers.update_user_message_text(block.text)
                    for block in message.content
                    if isinstance(block, TextContent)
                ]
            elif isinstance(message, AssistantMessage):
                for part in message.content:
                    if isinstance(part, TextContent):
                        out.append(helpers.update_agent_message_text(part.text))
                    elif isinstance(part, ThinkingContent):
                        out.append(helpers.update_agent_thought_text(part.thinking))
                    elif isinstance(part, ToolCall):
                        arguments = call_arguments(tools, part.name, part.arguments)
                        out.append(self._started(part.id, part.name, arguments))
            elif isinstance(message, ToolResultMessage):
                out.append(self._ended(message))
        return out


def _read_from(arguments: Any) -> int | None:
    """The line a read starts at, as ACP counts lines (from 0; the tool counts from 1)."""
    offset = arguments.get("offset") if isinstance(arguments, dict) else None
    return offset - 1 if isinstance(offset, int) and offset >= 1 else None


def first_change(old: str, new: str) -> int:
    """The first line (from 0) where `new` differs from `old`: where the editor should look."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    pairs = zip(old_lines, new_lines, strict=False)
    first = next((n for n, (before, after) in enumerate(pairs) if before != after), None)
    return min(len(old_lines), len(new_lines)) if first is None else first


def _terminal(result: ToolResultMessage) -> Any:
    """The editor's terminal a command ran in, kept in the call's content at its end (the
    editor still shows a released terminal's output; a replayed session shows the text)."""
    details = result.details
    terminal_id = details.get("terminal_id") if isinstance(details, dict) else None
    return helpers.tool_terminal_ref(terminal_id) if isinstance(terminal_id, str) else None


PLAN_STATUS: dict[str, Any] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "done": "completed",
}


def _plan(result: ToolResultMessage) -> list[Any]:
    """The todo list (the todo tool's, an approved plan's) as the editor's plan (ACP's `plan`
    update replaces the last)."""
    todos = todos_of(result)
    if todos is None:
        return []
    return [plan_update(todos)]


def plan_update(todos: list[Any]) -> Any:
    """Steps (`content`, `status`) as ACP plan entries."""
    entries = [
        helpers.plan_entry(
            str(t.get("content", "")), status=PLAN_STATUS.get(str(t.get("status")), "pending")
        )
        for t in todos
        if isinstance(t, dict)
    ]
    return helpers.update_plan(entries)
