"""The permission modes: their names, the order Shift+Tab steps through them, and which tools
each offers the model (asked before every request, since the mode may change mid-prompt).

Plan mode offers what read-only mode offers and the plan tool (`exit_plan_mode`), which no
other mode offers; the gate (permissions.py) puts the plan to the user and, once approved,
switches to the build mode chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeAlias

from di_code.agent.tool import AgentTool
from di_code.tools import READ_ONLY_MODE_TOOLS
from di_code.tools.builtin.cards import PLAN

PermissionMode: TypeAlias = Literal["ask", "accept-edits", "auto", "read-only", "plan"]
MODE_CYCLE: tuple[PermissionMode, ...] = ("ask", "accept-edits", "plan", "auto")
"""The modes Shift+Tab steps through in chat (read-only is fixed at start)."""
BUILD_MODES: tuple[PermissionMode, ...] = ("accept-edits", "ask")
"""What an approved plan is built in, as the user chooses: edits unasked, or each asked."""
PLAN_TOOL = PLAN.name
"""The tool that presents the plan (Gemini CLI's name; Claude Code's is ExitPlanMode)."""

PLAN_HINT = (
    " Plan mode: nothing is changed until the user approves a plan. Explore with the reading"
    f" tools, then present the plan with {PLAN_TOOL}."
)
"""Told with the refusal of a tool plan mode does not offer."""
PLAN_UNREVIEWED = (
    "The plan is presented: the user reviews it once this run has ended (plan mode changes "
    "nothing). End your turn now, without calling any other tool."
)
"""Told when nobody can review the plan now (`run`, which prints it as its answer)."""


def offered_tools(tools: Sequence[AgentTool], mode: PermissionMode) -> list[AgentTool]:
    """The tools the model is offered in `mode`: read-only and plan modes offer only the
    reading ones, plan mode its plan tool too, which no other mode offers."""
    if mode == "plan":
        return [tool for tool in tools if tool.name in READ_ONLY_MODE_TOOLS | {PLAN_TOOL}]
    if mode == "read-only":
        return [tool for tool in tools if tool.name in READ_ONLY_MODE_TOOLS]
    return [tool for tool in tools if tool.name != PLAN_TOOL]


def session_tools(tools: Sequence[AgentTool], mode: PermissionMode) -> list[AgentTool]:
    """The tools a session keeps: all of them, but in read-only mode (fixed when the session
    starts) only the reading ones. Which of them a request offers is `offered_tools`'s."""
    return offered_tools(tools, mode) if mode == "read-only" else list(tools)
