"""bash: own process group, interleaved output, limits, spill file, timeout, abort."""

from __future__ import annotations

import asyncio
import os
import tracemalloc
from pathlib import Path

import pytest

from di_code.agent import AgentTool, ToolResult
from di_code.ai import AbortController, ToolArgumentsError, validate_tool_arguments
from di_code.tools.builtin.bash import BashPolicy, BashTool
from di_code.tools.builtin.cards import BASH_DEFAULT_TIMEOUT
from di_code.tools.builtin.support import process
from di_code.tools.common.workspace import Workspace
from di_code.tools.process.sandbox import SandboxChoice
from tests.support.processes import alive, until
from tests.tools.conftest import run, text_of

SAFETY = 30.0  # seconds: only a net so a broken tool fails instead of hanging the suite


async def test_output_and_exit_code(tools: dict[str, AgentTool]) -> None:
    result = await run(tools["bash"], {"command": "echo out; echo err >&2; echo out2; exit 3"})
    assert text_of(result) == "out\nerr\nout2\n\nCommand exited with code 3"
    assert result.is_error
    assert result.details == {"exit_code": 3, "full_output_path": None, "truncated": False}


async def test_success_runs_in_the_workspace(tools: dict[str, AgentTool], workspace: Path) -> None:
    result = await run(tools["bash"], {"command": "pwd"})
    assert text_of(result) == str(workspace.resolve())
    assert not result.is_error
    assert result.details == {"exit_code": 0, "full_output_path": None, "truncated": False}


async def test_no_output(tools: dict[str, AgentTool]) -> None:
    assert text_of(await run(tools["bash"], {"command": "true"})) == "(no output)"


async def test_stdin_is_closed(tools: dict[str, AgentTool]) -> None:
    result = await run(tools["bash"], {"command": "read line; echo status=$?"})
    assert text_of(result) == "status=1"


async def test_the_command_leads_its_own_process_group(tools: dict[str, AgentTool]) -> None:
    result = await run(tools["bash"], {"command": "echo $$ $(cut -d' ' -f5 /proc/$$/stat)"})
    pid, pgid = text_of(result).split()
    assert pid == pgid
    assert int(pgid) != os.getpgrp()


async def test_sh_is_used_without_bash(
    tools: dict[str, AgentTool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "installed_program", lambda name: None)
    assert text_of(await run(tools["bash"], {"command": "echo $0"})) == "/bin/sh"


async def test_a_killed_shell_names_the_signal(tools: dict[str, AgentTool]) -> None:
    result = await run(tools["bash"], {"command": "kill -9 $$"})
    assert text_of(result) == "(no output)\n\nCommand killed by signal SIGKILL"
    assert result.is_error


async def test_long_output_keeps_the_tail_and_spills_the_rest(
    tools: dict[str, AgentTool],
) -> None:
    result = await run(tools["bash"], {"command": "seq 1 3000"})
    details = result.details
    spill = Path(details["full_output_path"])
    try:
        lines = text_of(result).split("\n")
        assert lines[0] == "1001" and lines[1999] == "3000"
        assert lines[2000:] == ["", f"[Showing lines 1001-3000 of 3000. Full output: {spill}]"]
        assert details == {"exit_code": 0, "full_output_path": str(spill), "truncated": True}
        assert spill.read_text() == "".join(f"{i}\n" for i in range(1, 3001))
    finally:
        spill.unlink()


async def test_200_mb_of_output_stays_in_bounded_memory(tools: dict[str, AgentTool]) -> None:
    line = "0123456789" * 4  # 41 bytes with its newline
    command = f"yes {line} | head -c 200000000"
    tracemalloc.start()
    try:
        result = await asyncio.wait_for(run(tools["bash"], {"command": command}), SAFETY)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    spill = Path(result.details["full_output_path"])
    try:
        assert spill.stat().st_size == 200_000_000
        body, notice = text_of(result).rsplit("\n\n", 1)
        assert len(body.encode()) <= 50 * 1024
        assert set(body.split("\n")[:-1]) == {line}
        assert notice.endswith(f"of 4878049. Full output: {spill}]")
        assert peak < 8 * 1024 * 1024
    finally:
        spill.unlink()


async def test_a_background_child_holding_the_pipe_does_not_hang(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    command = "sleep 1000 & echo $! > bg.pid; echo done"
    try:
        result = await asyncio.wait_for(run(tools["bash"], {"command": command}), SAFETY)
        assert text_of(result) == "done"
        assert not result.is_error
    finally:
        os.kill(int((workspace / "bg.pid").read_text()), 9)


async def test_timeout_stops_the_group_and_says_so(tools: dict[str, AgentTool]) -> None:
    result = await run(tools["bash"], {"command": "echo started; sleep 100", "timeout": 0.3})
    assert text_of(result) == (
        "started\n\nCommand timed out after 0.3 seconds; process group stopped (SIGTERM)"
    )
    assert result.is_error


async def test_a_group_that_ignores_term_is_killed(tools: dict[str, AgentTool]) -> None:
    command = "trap '' TERM; echo $$; sleep 100"
    result = await run(tools["bash"], {"command": command, "timeout": 0.2})
    pgid = int(text_of(result).split("\n")[0])
    assert text_of(result).endswith(
        "Command timed out after 0.2 seconds; process group stopped (SIGKILL after 2 s)"
    )
    assert process.group_members(pgid) == []


async def test_abort_kills_every_process_of_the_group(tools: dict[str, AgentTool]) -> None:
    controller = AbortController()
    updates: list[ToolResult] = []

    async def on_update(partial: ToolResult) -> None:
        updates.append(partial)

    command = "echo $$; sleep 100 & echo $!; sh -c 'echo $$; exec sleep 100'; wait"
    task = asyncio.create_task(
        tools["bash"].execute("call-1", {"command": command}, controller.signal, on_update)
    )
    await until(lambda: bool(updates) and len(text_of(updates[-1]).split()) == 3, "three pids")
    pids = [int(pid) for pid in text_of(updates[-1]).split()]
    assert all(alive(pid) for pid in pids)
    controller.abort()
    await until(lambda: not any(alive(pid) for pid in pids), "the group to end")
    result = await asyncio.wait_for(task, SAFETY)
    assert isinstance(result, ToolResult) and result.is_error
    assert text_of(result).endswith("Command aborted; process group stopped (SIGTERM)")


async def test_partial_output_is_streamed(tools: dict[str, AgentTool], workspace: Path) -> None:
    seen: list[str] = []

    async def on_update(partial: ToolResult) -> None:
        seen.append(text_of(partial))
        if "first" in seen[-1]:
            (workspace / "go").touch()

    command = "echo first; while [ ! -e go ]; do sleep 0.01; done; echo second"
    result = await asyncio.wait_for(
        tools["bash"].execute("c", {"command": command}, AbortController().signal, on_update),
        SAFETY,
    )
    assert seen[0] == "first"
    assert isinstance(result, ToolResult) and text_of(result) == "first\nsecond"


def test_timeout_defaults_to_120_s_and_is_capped_at_600_s(tools: dict[str, AgentTool]) -> None:
    bash = tools["bash"]
    assert (BASH_DEFAULT_TIMEOUT, bash.parameters["properties"]["timeout"]["maximum"]) == (120, 600)
    assert validate_tool_arguments(bash, {"command": "x", "timeout": 600}) == {
        "command": "x",
        "timeout": 600,
    }
    with pytest.raises(ToolArgumentsError, match="601 is greater than the maximum of 600"):
        validate_tool_arguments(bash, {"command": "x", "timeout": 601})


def test_the_model_is_told_when_commands_are_sandboxed(workspace: Path) -> None:
    space = Workspace.create(workspace)
    plain = BashTool(space).description
    confined = BashTool(space, BashPolicy(SandboxChoice("read-only"))).description
    assert "sandbox" not in plain
    assert plain.endswith("ends only when di-code exits.")
    assert confined.startswith(plain.split(" For a server")[0])
    assert "read-only except /tmp" in confined and "no network" in confined
    assert "ends only when di-code exits" not in confined  # one rule per state: the sandbox's
    assert "share one private loopback" in confined
