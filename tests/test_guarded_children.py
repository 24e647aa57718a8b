"""The guard for children: every process di-code starts goes through di_code.system.children (a
group of its own, PR_SET_PDEATHSIG, stopped at exit), so none outlives di-code. Read from the
code: a module that calls a process-starting function itself fails here."""

from __future__ import annotations

import ast
import os
import signal
from pathlib import Path

import pytest

from di_code.system.children import descendants, run_child
from tests.support.processes import wait_until

PACKAGE = Path(__file__).resolve().parent.parent / "di_code"
GUARDED = "system/children.py"

SPAWNERS = {
    "subprocess": {"run", "Popen", "call", "check_call", "check_output", "getoutput"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "os": {"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp"}
    | {f"exec{tail}" for tail in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
    | {f"spawn{tail}" for tail in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")},
    "anyio": {"open_process", "run_process"},
    "pty": {"spawn", "fork"},
}
LOOP_SPAWNERS = {"subprocess_exec", "subprocess_shell"}
"""`loop.subprocess_exec(...)`: whatever the loop is called."""

DYING_ARGV = {"dying_argv", "trusted_command_argv"}
"""What builds a command line that dies with di-code (the guarded place's, and the launcher's)."""

OUTSIDE_THE_GUARD = {
    "batch/worker.py": "it starts the task's keeper, which sets PR_SET_PDEATHSIG: batch_child",
    "cli/batch_child.py": "the keeper forks `run`, which sets it too: set_death_signal",
    "system/lone_copy.py": "a copy of di-code that runs no program, and is waited for: within",
}
"""Each module outside the guard, and why: the name after the colon is in its code."""


def spawns(source: str) -> list[str]:
    """The process-starting calls in `source` made without the guarded place (`module.name` each); a
    stdio MCP server's parameters count as one unless `dying_argv` builds its command."""
    tree = ast.parse(source)
    imported: dict[str, str] = {}  # a name imported from a spawning module -> module.name
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in SPAWNERS:
            for alias in node.names:
                if alias.name in SPAWNERS[node.module]:
                    imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    found: list[str] = []
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            base = func.value.id if isinstance(func.value, ast.Name) else None
            if func.attr in SPAWNERS.get(base or "", set()) or func.attr in LOOP_SPAWNERS:
                found.append(f"{base or '?'}.{func.attr}")
        elif isinstance(func, ast.Name):
            if func.id in imported:
                found.append(imported[func.id])
            elif func.id == "StdioServerParameters" and not names & DYING_ARGV:
                found.append("mcp.StdioServerParameters")
    return found


def test_every_child_is_started_through_the_guarded_place() -> None:
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative == GUARDED or relative in OUTSIDE_THE_GUARD:
            continue
        found = spawns(path.read_text(encoding="utf-8"))
        if found:
            offenders[relative] = found
    assert offenders == {}, "start children with di_code.system.children (start_child, run_child)"


def test_the_exceptions_still_start_what_they_say() -> None:
    for relative, why in OUTSIDE_THE_GUARD.items():
        source = (PACKAGE / relative).read_text(encoding="utf-8")
        assert spawns(source), f"{relative} starts nothing any more: take it off the list"
        assert why.rsplit(": ", 1)[1] in source


def test_the_checker_catches_a_planted_one() -> None:
    planted = """
import asyncio, os, subprocess
from asyncio import create_subprocess_exec as spawn
from mcp.client.stdio import StdioServerParameters

async def bad(loop):
    subprocess.run(["git", "status"])
    subprocess.Popen(["sleep", "1"])
    await spawn("bash", "-c", "true")
    await asyncio.create_subprocess_shell("true")
    await loop.subprocess_exec(lambda: None, "true")
    os.posix_spawn("/bin/true", ["true"], {})
    os.execvp("true", ["true"])
    StdioServerParameters(command="server", args=[])
"""
    assert sorted(spawns(planted)) == sorted(
        [
            "subprocess.run",
            "subprocess.Popen",
            "asyncio.create_subprocess_exec",
            "asyncio.create_subprocess_shell",
            "loop.subprocess_exec",
            "os.posix_spawn",
            "os.execvp",
            "mcp.StdioServerParameters",
        ]
    )
    through_the_guarded_place = """
from di_code.system.children import dying_argv, run_child, start_child

async def good():
    run_child(["git", "status"])
    await start_child("bash", "-c", "true")
    command, *args = dying_argv(["server"])
    StdioServerParameters(command=command, args=args)
"""
    assert spawns(through_the_guarded_place) == []


LAUNCHER = "tools/process/launcher.py"
GUARDED_CALLS = {"start_child", "run_child", "open_child", "dying_argv"}
READS_NO_WORKSPACE_CODE = {
    "ui/pager.py": "the pager shows di-code's own text",
    "tools/process/sandbox.py": "bubblewrap's probe runs `/bin/sh -c :`",
    "tools/process/session_network.py": "the session's network namespace is made by "
    "`/bin/sh -c 'read _'` and tried with `/bin/sh -c :`, in an empty bubblewrap",
    "tools/builtin/support/ripgrep.py": "rg reads files and runs nothing they name",
    "session/git_run.py": "git, with the configuration that runs none of a repository's "
    "programs (a lower layer than the launcher's)",
}
"""Modules that start children through the guarded place without the launcher, and why each may."""


def guarded_calls(source: str) -> list[str]:
    """di_code.system.children's starting functions that `source` calls itself."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in GUARDED_CALLS:
                found.append(name)
    return found


def test_every_program_that_reads_the_workspace_starts_through_the_launcher() -> None:
    """bash, language servers, hooks and MCP stdio servers: the launcher decides whether each
    runs sandboxed (di_code.tools.process.launcher). A module that starts a child around it
    fails here, unless it is listed with the reason its child runs no workspace code."""
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in (GUARDED, LAUNCHER) or relative in READS_NO_WORKSPACE_CODE:
            continue
        found = guarded_calls(path.read_text(encoding="utf-8"))
        if found:
            offenders[relative] = found
    assert offenders == {}, "start programs that read the workspace with the launcher"
    for relative in READS_NO_WORKSPACE_CODE:
        assert guarded_calls((PACKAGE / relative).read_text(encoding="utf-8")), relative


def test_the_launcher_checker_catches_a_planted_one() -> None:
    planted = """
from di_code.system import children

async def server():
    await children.start_child("gopls")
    children.run_child(["make"])
    children.dying_argv(["server"])
"""
    assert sorted(guarded_calls(planted)) == ["dying_argv", "run_child", "start_child"]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="reads /proc (Linux)")
def test_what_a_child_leaves_in_a_session_of_its_own_stays_below_di_code() -> None:
    """The guarded place makes di-code a child subreaper: a `setsid` job whose shell is gone is
    re-parented to di-code (not init), so the exit finds it among di-code's descendants."""
    started = run_child(
        ["sh", "-c", "setsid sleep 1000 > /dev/null 2>&1 & echo $!"], capture_output=True
    )
    job = int(started.stdout)
    try:
        wait_until(lambda: parent(job) == os.getpid(), "the job to be re-parented to di-code")
        assert job in descendants(os.getpid())
    finally:
        os.kill(job, signal.SIGKILL)


def parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rfind(")") + 2 :].split()[1])
