"""The attack cases of issue 13 through the real gate and the real bash tool: each command
really runs (or not) in a temporary workspace, and the file it would make is checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.agent import AgentTool
from di_code.tools.policy.permissions import (
    Approval,
    ApprovalRequest,
    PermissionGate,
    PermissionRules,
)
from di_code.ui.approval import question
from tests.support.gated import gate_tools
from tests.tools.conftest import run, text_of

PAYLOADS = [
    "echo ${x:=$'\\x24(touch P)'}${x@P}",
    "echo ${x:=$'a[\\x60touch P\\x60]'} ${a[x]}",
    "git status ${x:=$'\\x24(touch P)'}${x@P}",
]


def gated(tools: dict[str, AgentTool], mode: str, **rules: list[str]) -> AgentTool:
    gate = PermissionGate(mode, PermissionRules.parse(**rules))  # type: ignore[arg-type]
    [bash] = gate_tools([tools["bash"]], gate)
    return bash


async def test_the_payloads_do_run_touch_when_allowed_outright(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    """The control: bash really runs touch for these lines, so the next test means something."""
    for payload in PAYLOADS[:2]:
        await run(gated(tools, "ask", allow=["bash"]), {"command": payload})
        assert (workspace / "P").exists(), payload
        (workspace / "P").unlink()


@pytest.mark.parametrize("payload", PAYLOADS)
async def test_a_prefix_rule_does_not_run_an_expansion_payload(
    tools: dict[str, AgentTool], workspace: Path, payload: str
) -> None:
    bash = gated(tools, "ask", allow=["bash:echo", "bash:git status"])
    result = await run(bash, {"command": payload})
    assert result.is_error and "needs the user's approval" in text_of(result)
    assert not (workspace / "P").exists()


@pytest.mark.parametrize(
    "command",
    [
        "(rm x)",
        "{ rm x; }",
        "X=1 rm x",
        "exec rm x",
        "echo $(rm x)",
        "env rm x",
        "command rm x",
        "/bin/rm x",
        "\\rm x",
    ],
)
async def test_each_deny_evasion_is_denied(
    tools: dict[str, AgentTool], workspace: Path, command: str
) -> None:
    (workspace / "x").write_text("keep me")
    bash = gated(tools, "auto", deny=["bash:rm"])
    result = await run(bash, {"command": command})
    assert result.is_error and "deny rule" in text_of(result)
    assert (workspace / "x").read_text() == "keep me"


# Issue 23: forms whose code hides in an argument. Each really removes x in bash (the control
# run under a bare "bash" rule shows it) and must be denied by "bash:rm".
HIDDEN_RM = [
    "trap 'rm x' EXIT",
    "shopt -s expand_aliases\nalias ls='rm x'\nls",
    "hash -p /bin/rm ls; ls x",
    "v='a[$(rm x)]'; echo $((v))",
    "echo ${a['$(rm x)']}",
    "printf -v 'a[$(rm x)]' y",
    "test -v 'a[$(rm x)]'",
    "echo x | xargs --max-args 1 rm",
    "stdbuf --output L rm x",
    "bash -c -- 'rm x'",
    "rbash -c 'rm x'",
    "mapfile -C 'rm x #' -c 1 a <<< y",
    "v='$(rm x)'; echo ${v@P}",
    "flock lockfile rm x",
    "flock lockfile -c 'rm x'",
]


@pytest.mark.parametrize("command", HIDDEN_RM)
async def test_a_hidden_rm_really_runs_and_a_deny_rule_stops_it(
    tools: dict[str, AgentTool], workspace: Path, command: str
) -> None:
    (workspace / "x").write_text("keep me")
    await run(gated(tools, "auto"), {"command": command})
    assert not (workspace / "x").exists(), "the control: bash does run rm here"
    (workspace / "x").write_text("keep me")
    result = await run(gated(tools, "auto", deny=["bash:rm"]), {"command": command})
    assert result.is_error and "deny rule" in text_of(result)
    assert (workspace / "x").read_text() == "keep me"


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("printf -v 'a[$(touch P)]' x", "bash:printf"),
        ("printf -v 'a[$(id > P)]' x", "bash:printf"),
        ("test -v 'a[$(touch P)]'", "bash:test"),
        ("[ -v 'a[$(touch P)]' ]", "bash:["),
        ("read 'a[$(touch P)]' < /dev/null", "bash:read"),
        ("let 'a[$(touch P)]=1'", "bash:let"),
    ],
)
async def test_an_allow_rule_does_not_run_code_hidden_in_a_subscript(
    tools: dict[str, AgentTool], workspace: Path, command: str, allowed: str
) -> None:
    await run(gated(tools, "auto"), {"command": command})
    assert (workspace / "P").exists(), "the control: bash does run touch here"
    (workspace / "P").unlink()
    result = await run(gated(tools, "ask", allow=[allowed]), {"command": command})
    assert result.is_error and "needs the user's approval" in text_of(result)
    assert not (workspace / "P").exists()


class Always:
    """Answers every question with its first "always" offer, and keeps the questions."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.asked.append(request)
        offers = request.offers
        return Approval(True, offers[0] if offers else None)


async def test_always_for_a_harmless_printf_does_not_run_a_hidden_subscript(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    approver = Always()
    gate = PermissionGate("ask", approver=approver)
    [bash] = gate_tools([tools["bash"]], gate)
    await run(bash, {"command": "printf '%s\\n' hello"})
    assert [str(rule) for rule in gate.grants] == ["bash:printf %s\\n"]
    await run(bash, {"command": "printf -v 'a[$(touch P)]' x"})
    assert len(approver.asked) == 2, "the subscript line is asked about"
    assert approver.asked[1].offers == ()


async def test_always_for_rm_grants_that_exact_line_only(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    approver = Always()
    gate = PermissionGate("ask", approver=approver)
    [bash] = gate_tools([tools["bash"]], gate)
    for name in ("notes.txt", "other.txt"):
        (workspace / name).write_text("x")
    await run(bash, {"command": "rm -f notes.txt"})
    [offer] = approver.asked[0].offers
    assert "[a] always: this exact command only" in question(approver.asked[0])
    assert [str(rule) for rule in offer.rules] == ["bash (this exact command): rm -f notes.txt"]
    await run(bash, {"command": "rm -f other.txt"})
    assert len(approver.asked) == 2, "another rm is asked about"
    (workspace / "notes.txt").write_text("x")
    await run(bash, {"command": "rm -f notes.txt"})
    assert len(approver.asked) == 2, "the same line is not"
    assert not (workspace / "notes.txt").exists()


async def test_the_model_is_told_why_an_unreadable_line_is_denied(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    bash = gated(tools, "auto", deny=["bash:rm"])
    hidden = text_of(await run(bash, {"command": "for ((i=0; i<2; i++)); do echo $i; done"}))
    plain = text_of(await run(bash, {"command": "rm x"}))
    assert "deny rule" in hidden and "cannot check" in hidden and "plainly" in hidden
    assert "deny rule" in plain and "cannot check" not in plain
