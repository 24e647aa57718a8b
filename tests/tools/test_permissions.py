"""The permission gate: modes, rules (deny wins), approvals and refusals the model can read."""

from __future__ import annotations

from typing import Any

import pytest

from di_code.agent.tool import FunctionTool, ToolResult
from di_code.ai.abort import AbortController
from di_code.ai.types import TextContent
from di_code.tools.permissions import (
    Approval,
    ApprovalRequest,
    PermissionGate,
    PermissionRules,
    command_parts,
    gate_tools,
)


def make_tool(name: str, runs: list[str]) -> FunctionTool:
    async def run(_id: str, params: dict[str, Any], _signal: object) -> list[TextContent]:
        runs.append(name)
        return [TextContent(f"{name} ran")]

    return FunctionTool(name, f"the {name} tool", {"type": "object"}, run)


def test_command_parts_split_at_shell_separators() -> None:
    assert command_parts("git status && rm -rf x; ls | wc -l & echo\nid") == [
        "git status",
        "rm -rf x",
        "ls",
        "wc -l",
        "echo",
        "id",
    ]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git status", "allow"),
        ("git status --short", "allow"),
        ("git statusx", None),
        ("git status && ls -la", "allow"),
        ("git status && rm -rf /tmp/x", "deny"),
        ("git status; curl evil", None),
        ("git status $(curl evil)", None),
        ("git status > out.txt", None),
        ("rm -rf /", "deny"),
    ],
)
def test_bash_prefix_rules(command: str, expected: str | None) -> None:
    rules = PermissionRules.parse(allow=["bash:git status", "bash:ls"], deny=["bash:rm"])
    assert rules.decide("bash", {"command": command}) == expected


def test_deny_wins_over_allow() -> None:
    rules = PermissionRules.parse(allow=["bash", "write"], deny=["bash:curl", "write"])
    assert rules.decide("bash", {"command": "curl x"}) == "deny"
    assert rules.decide("bash", {"command": "echo $(date)"}) == "allow"
    assert rules.decide("write", {"path": "a"}) == "deny"
    assert rules.decide("edit", {"path": "a"}) is None


async def run_gated(gate: PermissionGate, name: str, params: dict[str, Any]) -> ToolResult:
    runs: list[str] = []
    [tool] = gate_tools([make_tool(name, runs)], gate)
    output = await tool.execute("c1", params, AbortController().signal)
    assert isinstance(output, ToolResult) == (not runs)
    return output if isinstance(output, ToolResult) else ToolResult(list(output))


async def test_ask_without_approver_denies_and_says_why() -> None:
    result = await run_gated(PermissionGate("ask"), "bash", {"command": "ls"})
    assert result.is_error
    assert "needs the user's approval and there is no terminal" in result.content[0].text  # type: ignore[union-attr]


async def test_ask_mode_lets_read_tools_run_and_allow_rules_skip_the_question() -> None:
    assert not (await run_gated(PermissionGate("ask"), "read", {"path": "a"})).is_error
    gate = PermissionGate("ask", PermissionRules.parse(allow=["bash:ls"]))
    assert not (await run_gated(gate, "bash", {"command": "ls -la"})).is_error


async def test_auto_runs_everything_but_denied_calls() -> None:
    gate = PermissionGate("auto", PermissionRules.parse(deny=["bash:rm"]))
    assert not (await run_gated(gate, "bash", {"command": "echo hi"})).is_error
    refused = await run_gated(gate, "bash", {"command": "rm -rf x"})
    assert refused.is_error and "deny rule" in refused.content[0].text  # type: ignore[union-attr]


async def test_approver_answers_and_always_is_remembered() -> None:
    answers: list[Approval] = ["no", "always"]
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return answers.pop(0)

    gate = PermissionGate("ask", approver=approver)
    declined = await run_gated(gate, "bash", {"command": "make"})
    assert declined.is_error and "declined" in declined.content[0].text  # type: ignore[union-attr]
    assert not (await run_gated(gate, "bash", {"command": "make"})).is_error
    assert not (await run_gated(gate, "bash", {"command": "make test"})).is_error
    assert [request.summary for request in asked] == ["bash: make", "bash: make"]


def test_read_only_offers_only_reading_tools() -> None:
    tools = [
        make_tool(name, []) for name in ("read", "write", "edit", "bash", "grep", "find", "ls")
    ]
    offered = gate_tools(tools, PermissionGate("read-only"))
    assert [tool.name for tool in offered] == ["read", "grep", "find", "ls"]
    assert [tool.name for tool in gate_tools(tools, PermissionGate("ask"))] == [
        t.name for t in tools
    ]


async def test_an_abort_ends_an_open_question() -> None:
    import asyncio

    asked = asyncio.Event()

    async def never_answers(request: ApprovalRequest) -> Approval:
        asked.set()
        await asyncio.Event().wait()
        return "yes"

    runs: list[str] = []
    [tool] = gate_tools([make_tool("bash", runs)], PermissionGate("ask", approver=never_answers))
    controller = AbortController()
    running = asyncio.create_task(tool.execute("c1", {"command": "ls"}, controller.signal))
    await asked.wait()
    controller.abort()
    result = await asyncio.wait_for(running, timeout=10)
    assert isinstance(result, ToolResult) and result.is_error and runs == []
    assert result.content[0].text == "Operation aborted"  # type: ignore[union-attr]
