"""The todo tool: the model's plan for long work, a list of steps it rewrites as it goes.

It changes nothing but the plan, so it runs in every mode without asking. The list comes back
in `details` (`{"todos": [...]}`) for the screens that show it (chat's plan panel, `run`'s
stderr, ACP's plan update) and is kept in the session with the tool result, so a resumed
conversation has it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from di_code.agent.tool import ToolOutput, ToolResult, ToolUpdate
from di_code.ai.types import TextContent, ToolResultMessage
from di_code.system.abort import AbortSignal
from di_code.tools.builtin.cards import PLAN, TODO
from di_code.tools.common.base import CheckedTool
from di_code.tools.common.errors import ToolError

MARKS = {"pending": "[ ]", "in_progress": "[>]", "done": "[x]"}
SETS_TODOS = (TODO.name, PLAN.name)
"""The tools whose result sets the todo list: this one, and an approved plan (plan mode)."""


@dataclass(frozen=True, slots=True)
class TodoTool(CheckedTool):
    name: ClassVar[str] = TODO.name
    description: ClassVar[str] = TODO.description
    parameters: ClassVar[dict[str, Any]] = TODO.parameters

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        todos = [{"content": t["content"], "status": _status(t["status"])} for t in params["todos"]]
        working = [t for t in todos if t["status"] == "in_progress"]
        if len(working) > 1:
            raise ToolError("Only one step can be in_progress at a time")
        return ToolResult([TextContent(plan_text(todos))], {"todos": todos})


def todos_of(result: ToolResultMessage) -> list[Any] | None:
    """The todo list a tool result set (its `details["todos"]`), or None when it set none
    (another tool, a failed call): what every screen showing the list reads."""
    details = result.details if result.tool_name in SETS_TODOS and not result.is_error else None
    todos = details.get("todos") if isinstance(details, dict) else None
    return todos if isinstance(todos, list) else None


def _status(given: str) -> str:
    """One word for a finished step in the plan kept (`done`), whichever the model sent."""
    return "done" if given == "completed" else given


def plan_text(todos: list[dict[str, str]]) -> str:
    """`Plan: 1/3 done` and a line per step with its mark: what the model reads back and
    what `run` prints."""
    if not todos:
        return "Plan cleared."
    done = sum(t["status"] == "done" for t in todos)
    lines = [f"Plan: {done}/{len(todos)} done"]
    lines += [f"{MARKS.get(t['status'], '[?]')} {t['content']}" for t in todos]
    return "\n".join(lines)
