"""The bash sandbox (bubblewrap): what a sandboxed command can write, and what it can reach.

Real bubblewrap, real commands, a real loopback listener. Skipped where bubblewrap is missing
or cannot make namespaces (`.ci/run` installs it when it runs as root).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from di_code.tools import default_tools
from di_code.tools.builtin.bash import BashPolicy, BashTool
from di_code.tools.common.workspace import Workspace
from di_code.tools.policy.permissions import YES, Approval, ApprovalRequest, PermissionGate
from di_code.tools.process.sandbox import SandboxChoice
from tests.support.bubblewrap import needs_bubblewrap, sleeping
from tests.support.gated import gate_tools
from tests.support.processes import until
from tests.tools.conftest import run, text_of

pytestmark = needs_bubblewrap


def sandboxed(*roots: Path, mode: str = "workspace-write", network: bool = False) -> BashTool:
    space = Workspace.create(roots[0], roots[1:])
    return BashTool(space, BashPolicy(SandboxChoice(mode, network)))  # type: ignore[arg-type]


async def test_writes_inside_the_workspace_roots_only(
    workspace: Path, outside: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    tool = sandboxed(workspace, extra)
    result = await run(tool, {"command": f"echo in > inside.txt && echo more > {extra}/x.txt"})
    assert not result.is_error, text_of(result)
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert (extra / "x.txt").read_text() == "more\n"

    result = await run(tool, {"command": f"echo escaped > {outside}/stolen.txt"})
    assert result.is_error
    assert "Read-only file system" in text_of(result)
    assert not (outside / "stolen.txt").exists()


async def test_read_only_mode_writes_nowhere_but_its_private_tmp(workspace: Path) -> None:
    tool = sandboxed(workspace, mode="read-only")
    result = await run(tool, {"command": "touch made.txt"})
    assert result.is_error and "Read-only file system" in text_of(result)
    assert not (workspace / "made.txt").exists()
    result = await run(tool, {"command": 'echo scratch > "$TMPDIR/note" && cat "$TMPDIR/note"'})
    assert text_of(result) == "scratch"


async def test_tmp_is_private(workspace: Path) -> None:
    marker = f"di-code-sandbox-test-{workspace.parent.name}"
    result = await run(sandboxed(workspace), {"command": f"echo x > /tmp/{marker}"})
    assert not result.is_error, text_of(result)
    assert not (Path("/tmp") / marker).exists()


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(10)
    yield server
    server.close()


async def test_no_network_unless_allowed(workspace: Path, listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"

    refused = await run(sandboxed(workspace), {"command": connect})
    assert refused.is_error
    assert "connected" not in text_of(refused)

    allowed = await run(sandboxed(workspace, network=True), {"command": connect})
    assert text_of(allowed) == "connected"
    accepted, _ = listener.accept()
    accepted.close()


async def test_no_process_outlives_the_command(workspace: Path) -> None:
    """The pid namespace ends with the command: even a job that left its group is gone."""
    result = await run(
        sandboxed(workspace),
        {"command": "setsid sleep 1000.17 > /dev/null 2>&1 & echo started"},
    )
    assert text_of(result) == "started"
    await until(lambda: not sleeping("1000.17"), "the sleep to end")


async def test_the_full_output_file_can_be_read_by_the_next_command(workspace: Path) -> None:
    """The spill folder lies below /tmp without a session, yet stays visible (read-only)."""
    tool = sandboxed(workspace)
    spill = Path((await run(tool, {"command": "seq 1 3000"})).details["full_output_path"])
    try:
        assert text_of(await run(tool, {"command": f"tail -n 1 {spill}"})) == "3000"
        result = await run(tool, {"command": f"echo changed > {spill}"})
        assert result.is_error and "Read-only file system" in text_of(result)
    finally:
        spill.unlink()


async def approve(request: ApprovalRequest) -> Approval:
    return YES


async def test_without_an_explicit_mode_the_sandbox_follows_the_permission_mode(
    workspace: Path, outside: Path
) -> None:
    """Approved in ask mode, a command runs as it is; unapproved in auto, it is confined."""
    gate = PermissionGate("ask", approver=approve)
    policy = BashPolicy(SandboxChoice(None), mode=lambda: gate.mode)
    tools = gate_tools(default_tools(workspace, bash=policy), gate)
    bash = next(tool for tool in tools if tool.name == "bash")

    asked = await run(bash, {"command": f"echo asked > {outside}/asked.txt"})
    assert not asked.is_error, text_of(asked)
    assert (outside / "asked.txt").read_text() == "asked\n"
    assert "sandbox" not in bash.description

    assert gate.switch("auto") == []  # bubblewrap works: nothing to warn about
    unasked = await run(bash, {"command": f"echo unasked > {outside}/unasked.txt"})
    assert unasked.is_error and "Read-only file system" in text_of(unasked)
    assert not (outside / "unasked.txt").exists()
    assert "Commands run in a sandbox" in bash.description

    gate.switch("ask")
    again = await run(bash, {"command": f"echo again > {outside}/again.txt"})
    assert not again.is_error, text_of(again)
    assert (outside / "again.txt").read_text() == "again\n"
