"""Ctrl-O and /expand on a task: the subagent's whole conversation, read back from the file the
task kept it in (`details.transcript`, di_code.setup.subagents): its job, what it said, each of
its tool calls as its own folded panel, its answer. A task without that file (a chat without a
session, a file since removed) is expanded as any call is: its calls listed, its whole answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from di_code.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage
from di_code.session import Session, SessionError
from di_code.system.safe_text import visible
from di_code.ui.tool_view import framed, status_line, tool_panel, tool_title


def transcript_panel(
    number: int, name: str, arguments: Any, result: ToolResultMessage
) -> RenderableType | None:
    """The conversation of the subagent behind `result`, or None when none was kept."""
    details = result.details if isinstance(result.details, dict) else {}
    path = details.get("transcript")
    if not isinstance(path, str):
        return None
    try:
        messages = Session.load(Path(path)).context()
    except SessionError:
        return None
    parts: list[RenderableType] = []
    calls: dict[str, ToolCall] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            calls.update((c.id, c) for c in message.content if isinstance(c, ToolCall))
            if message.text.strip():
                parts.append(Text(visible(message.text.strip())))
        elif isinstance(message, ToolResultMessage):
            call = calls.get(message.tool_call_id)
            parts.append(tool_panel(message.tool_name, call and call.arguments, message))
        else:
            job = "".join(b.text for b in message.content if isinstance(b, TextContent))
            parts.append(Text.assemble(("› ", "bold cyan"), (visible(job), "bold")))
    parts.append(Text(f"transcript: {visible(path)}", style="dim"))
    title = Text(f"#{number} ", style="dim")
    title.append_text(tool_title(name, arguments))
    border = "red" if result.is_error else "green"
    return framed(Group(*parts), title, border, status_line(result, None))
