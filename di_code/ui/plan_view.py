"""The model's plan (the todo tool) in chat: one panel in the live area, above the status
line, redrawn in place each time the model changes the plan, printed once into the
scrollback when the prompt ends (and when a conversation is resumed). A plan approved in plan
mode (`exit_plan_mode`) sets it too; the plan presented for approval is a panel of its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from di_code.ai.types import Message, ToolResultMessage
from di_code.system.safe_text import visible
from di_code.tools.builtin.todo import todos_of
from di_code.ui.tool_view import framed

MARKS = {"done": ("☑ ", "dim"), "in_progress": ("◐ ", "bold yellow"), "pending": ("☐ ", "")}


def plan_of(result: ToolResultMessage) -> list[dict[str, str]] | None:
    """The steps a todo call (or an approved plan) set, or None when `result` is not one."""
    todos = todos_of(result)
    if todos is None:
        return None
    return [
        {"content": str(t.get("content", "")), "status": str(t.get("status", "pending"))}
        for t in todos
        if isinstance(t, dict)
    ]


def last_plan(messages: Sequence[Message]) -> list[dict[str, str]] | None:
    """The plan as the conversation left it (a resumed chat shows it)."""
    for message in reversed(messages):
        if isinstance(message, ToolResultMessage) and (plan := plan_of(message)) is not None:
            return plan
    return None


def presented_plan_panel(body: Text) -> RenderableType:
    """The plan the model presents in plan mode, as the user is asked to approve it."""
    return framed(body, Text("plan", style="bold cyan"), "cyan", "nothing changed yet")


def plan_panel(steps: list[dict[str, Any]]) -> RenderableType:
    done = sum(step["status"] == "done" for step in steps)
    body = Text()
    for number, step in enumerate(steps):
        mark, style = MARKS.get(step["status"], ("? ", ""))
        body.append(("\n" if number else "") + mark + visible(step["content"]), style)
    title = Text(f"plan {done}/{len(steps)} done", style="bold cyan")
    return framed(body if steps else Text("(no steps)", "dim"), title, "cyan")


def plan_change_line(steps: list[dict[str, Any]]) -> Text:
    """What the scrollback keeps of one change of the plan (the panel itself is live): the
    step now in progress, so a turn that only changed the plan is not an empty frame."""
    current = next((step["content"] for step in steps if step["status"] == "in_progress"), None)
    if current is not None:
        now = f"◐ {visible(current)}"
    elif steps and all(step["status"] == "done" for step in steps):
        now = "every step done"
    else:
        now = f"{len(steps)} step{'' if len(steps) == 1 else 's'}"
    return Text(f"◆ plan changed · {now}", style="dim")
