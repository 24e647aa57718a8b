"""The plan tool (`exit_plan_mode`): what runs once the user has approved the plan.

The question itself is the permission gate's (`plan_reviewer` in
di_code.tools.policy.permissions): when this runs, the gate has switched to the build mode the
user chose. The result makes the plan's steps the todo list (`details["todos"]`, as the todo
tool's: every screen that shows the todo list shows them) and tells the model the mode it now
builds in.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from di_code.agent.tool import ToolOutput, ToolResult, ToolUpdate
from di_code.ai.types import TextContent
from di_code.system.abort import AbortSignal
from di_code.tools.builtin.cards import PLAN, PLAN_MAX_STEPS
from di_code.tools.builtin.todo import plan_text
from di_code.tools.common.base import CheckedTool

_ITEM = re.compile(r"(?:[-*+]|\d{1,3}[.)])[ \t]+(\S.*)")
"""A top-level list item of markdown: `- step`, `* step`, `1. step`, `2) step`."""
BUILDING = {
    "accept-edits": "write and edit run without asking; bash and the other tools are asked",
    "ask": "the user approves each write, edit, bash and other tool call",
}


@dataclass(frozen=True, slots=True)
class PlanTool(CheckedTool):
    name: ClassVar[str] = PLAN.name
    description: ClassVar[str] = PLAN.description
    parameters: ClassVar[dict[str, Any]] = PLAN.parameters

    mode: Callable[[], str]
    """The permission mode now (the gate's): the one the user chose to build in."""

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        plan = params["plan"]
        steps = plan_steps(params)
        todos = [{"content": step, "status": "pending"} for step in steps]
        mode = self.mode()
        text = (
            f"The user approved the plan. Permission mode: {mode} "
            f"({BUILDING.get(mode, 'as the user chose')}). Carry the plan out now, step by "
            "step; its steps are your todo list (update it with the todo tool as you go):\n"
            f"{plan_text(todos)}"
        )
        return ToolResult([TextContent(text)], {"todos": todos, "plan": plan, "mode": mode})


def plan_steps(arguments: dict[str, Any]) -> list[str]:
    """The plan's steps: those the call gives, else the plan's top-level list items (not
    indented), in order; a plan without any is one step, its first line."""
    given = arguments.get("steps")
    if isinstance(given, list) and given:
        return [str(step) for step in given][:PLAN_MAX_STEPS]
    plan = str(arguments.get("plan", ""))
    steps = [m.group(1).strip() for line in plan.splitlines() if (m := _ITEM.fullmatch(line))]
    if not steps:
        first = next((line.strip() for line in plan.splitlines() if line.strip()), "the plan")
        steps = [first.lstrip("# ")]
    return steps[:PLAN_MAX_STEPS]
