"""Plan mode at the permission gate (issue 44.1): what it offers and refuses, and the plan's
one question: approved (the gate switches to the build mode chosen), sent back with a remark,
refused, or asked of nobody (`run`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from di_code.tools import default_tools, plan_tool
from di_code.tools.builtin.plan import plan_steps
from di_code.tools.policy.modes import MODE_CYCLE, PLAN_UNREVIEWED, offered_tools, session_tools
from di_code.tools.policy.permissions import NO, Approval, ApprovalRequest, PermissionGate

PLAN = {"plan": "Rename\n\n1. Change app.py\n   - a detail, not a step\n2) Run the tests\n"}


def reviewer(answer: Approval, asked: list[ApprovalRequest]) -> Callable[..., Awaitable[Approval]]:
    async def review(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return answer

    return review


async def test_plan_mode_refuses_what_changes_and_tells_the_model_to_present_a_plan() -> None:
    gate = PermissionGate("plan", approver=reviewer(Approval(True), []))
    assert await gate.check("read", {"path": "a.py"}) is None
    refused = await gate.check("write", {"path": "a.py", "content": "x"})
    assert refused is not None and "write is not available in plan mode" in refused
    assert "exit_plan_mode" in refused
    assert await gate.check("lsp", {"operation": "diagnostics"}) is not None


async def test_an_approved_plan_switches_to_the_mode_chosen() -> None:
    asked: list[ApprovalRequest] = []
    gate = PermissionGate("plan")
    gate.plan_reviewer = reviewer(Approval(True, mode="accept-edits"), asked)
    assert await gate.check("exit_plan_mode", PLAN) is None
    assert gate.mode == "accept-edits"
    assert asked[0].modes == ("accept-edits", "ask")
    assert asked[0].arguments == PLAN
    assert (asked[0].tool_name, asked[0].summary) == ("exit_plan_mode", "exit_plan_mode: the plan")


async def test_a_hook_that_allows_does_not_skip_the_plans_question() -> None:
    asked: list[ApprovalRequest] = []
    gate = PermissionGate("plan")
    gate.plan_reviewer = reviewer(NO, asked)
    refused = await gate.check("exit_plan_mode", PLAN, hook="allow")
    assert refused is not None and "did not approve" in refused and len(asked) == 1
    assert gate.mode == "plan"


async def test_a_remark_keeps_planning_and_a_yes_without_a_mode_is_no() -> None:
    gate = PermissionGate("plan")
    gate.plan_reviewer = reviewer(Approval(False, feedback="  cover the README  "), [])
    said = await gate.check("exit_plan_mode", PLAN)
    assert said is not None and "cover the README Stay in plan mode" in said
    gate.plan_reviewer = reviewer(Approval(True), [])  # an approver that knows no modes
    assert await gate.check("exit_plan_mode", PLAN) is not None
    assert gate.mode == "plan"


async def test_nobody_to_review_the_plan_and_no_plan_mode() -> None:
    gate = PermissionGate("plan", approver=reviewer(Approval(True), []))  # run's terminal
    assert await gate.check("exit_plan_mode", PLAN) == PLAN_UNREVIEWED
    assert gate.presented == PLAN["plan"]  # `run`'s answer
    assert await gate.check("exit_plan_mode", {}) == PLAN_UNREVIEWED
    assert gate.presented == ""
    gate.switch("ask")
    outside = await gate.check("exit_plan_mode", PLAN)
    assert outside is not None and outside.startswith("Not in plan mode")


def test_each_mode_offers_its_tools(tmp_path: Any) -> None:
    tools = [*default_tools(tmp_path), plan_tool(lambda: "plan")]
    names = {mode: {t.name for t in offered_tools(tools, mode)} for mode in MODE_CYCLE}
    assert names["plan"] == {"read", "grep", "find", "ls", "todo", "exit_plan_mode"}
    assert "exit_plan_mode" not in names["ask"] | names["accept-edits"] | names["auto"]
    assert "write" in names["ask"]
    assert {t.name for t in session_tools(tools, "plan")} >= {"write", "exit_plan_mode"}
    assert "write" not in {t.name for t in session_tools(tools, "read-only")}


@pytest.mark.parametrize(
    ("arguments", "steps"),
    [
        (PLAN, ["Change app.py", "Run the tests"]),
        ({"plan": "x", "steps": ["one", "two"]}, ["one", "two"]),
        ({"plan": "## Just do it\n\nno list here"}, ["Just do it"]),
    ],
)
def test_a_plans_steps(arguments: dict[str, Any], steps: list[str]) -> None:
    assert plan_steps(arguments) == steps


async def test_the_plan_tool_makes_the_plan_the_todo_list() -> None:
    from di_code.system.abort import AbortController

    tool = plan_tool(lambda: "accept-edits")
    result = await tool.execute("p1", PLAN, AbortController().signal)
    assert result.details["todos"] == [
        {"content": "Change app.py", "status": "pending"},
        {"content": "Run the tests", "status": "pending"},
    ]
    assert result.details["mode"] == "accept-edits"
    assert "[ ] Run the tests" in result.text
