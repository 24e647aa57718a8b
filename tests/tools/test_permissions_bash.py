"""The attack cases of issue 13 through the real gate and the real bash tool: each command
really runs (or not) in a temporary workspace, and the file it would make is checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.agent import AgentTool
from di_code.tools.permissions import PermissionGate, PermissionRules
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
