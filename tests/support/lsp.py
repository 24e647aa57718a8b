"""The language servers the LSP tests start: the fixture server (lsp_fixture_server.py here)
found by its command line, a real basedpyright when installed, and the configuration that makes
di-code start them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from di_code.agent import AgentTool, ToolResult
from di_code.ai import AbortController
from di_code.tools.lsp.manager import LanguageServers
from di_code.tools.lsp.servers import catalog
from di_code.tools.lsp.spawn import ServerStarter
from tests.support.processes import SAFETY_TIMEOUT, alive

BIN = str(Path(sys.executable).parent)
"""Where this environment's programs (basedpyright among them) are installed."""
FIXTURE = Path(__file__).with_name("lsp_fixture_server.py")


def fixture_servers(workspace: Path, mode: str, **table: Any) -> LanguageServers:
    """The fixture server (FIXTURE) in `mode` as the one language server of `workspace`."""
    command = [sys.executable, str(FIXTURE), mode, str(workspace)]
    found = catalog(
        {"fixture": {"command": command, "extensions": [".txt"], **table}}, which=lambda _: None
    )
    return LanguageServers(
        found, workspace, starter=ServerStarter(cache=workspace.parent / "cache")
    )


def server_pids(workspace: Path) -> list[int]:
    """The fixture servers started for this workspace (their command line names it; the
    bubblewrap processes around them are not counted)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            program = Path(argv[0].decode()).name
            if (
                program != "bwrap"
                and str(FIXTURE).encode() in argv
                and str(workspace).encode() in argv
            ):
                pids.append(int(proc.name))
    return [pid for pid in pids if alive(pid)]


def text(result: ToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def installed(program: str) -> bool:
    return shutil.which(program, path=BIN + os.pathsep + os.environ.get("PATH", "")) is not None


needs_basedpyright = pytest.mark.skipif(
    not installed("basedpyright-langserver"), reason="basedpyright is not installed (pip)"
)


def telltale(program: Path) -> None:
    """An interpreter that leaves a mark where a sandboxed server can write (its cache, its
    home's `.cache`) and in the host's temp folder when not sandboxed, then runs Python."""
    program.parent.mkdir(parents=True, exist_ok=True)
    program.write_text(
        "#!/bin/sh\n"
        'echo ran >> "$HOME/.cache/ran" 2>/dev/null\n'
        f"echo ran >> {program.parent / 'ran'} 2>/dev/null\n"
        f'exec {sys.executable} "$@"\n'
    )
    program.chmod(0o755)


WITH_SERVERS = {"DI_CODE_LSP": "on", "PATH": BIN + os.pathsep + os.environ.get("PATH", "")}


NO_SERVERS = {"DI_CODE_LSP": "on", "PATH": "/nonexistent"}


def configure(home: Path, project: Path) -> dict[str, str]:
    """A fixture server for .txt files (runs untrusted) and one for .go files in gopls's
    place (a preset that waits for trust), each named by the project's path in its command
    (so its process is found); the environment the chat runs with."""
    fixture = f'["{sys.executable}", "{FIXTURE}", "lines", "{project}"]'
    (home / "config.toml").write_text(
        f'[lsp.fixture]\ncommand = {fixture}\nextensions = [".txt"]\n'
        f'[lsp.gopls]\ncommand = {fixture}\nextensions = [".go"]\n'
    )
    return {"DI_CODE_LSP": "on", "PATH": "/usr/bin:/bin"}  # none of this machine's servers


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "notes.txt").write_text("nothing bad\n")
    (folder / "main.go").write_text("package main\n")
    return folder


AT_ONCE = 2.0
"""A stop ends a wait "at once": well within this, where the unstopped wait is 10 to 60 s."""


STOP_AFTER = 0.5


async def stopped(
    tool: AgentTool, params: dict[str, object], once: Callable[[], bool] | None = None
) -> float:
    """Run `tool`, stop it `once` that holds (polled: the change is on disk, so it waits for
    the diagnostics after it; a fixed time would come before the write on a loaded machine),
    or after STOP_AFTER s (a wait that lasts far longer: a silent server's start); how long it
    took to end after the stop (an edit ends with its result)."""
    stop = AbortController()
    call = asyncio.ensure_future(tool.execute("1", params, stop.signal))
    if once is None:
        await asyncio.wait({call}, timeout=STOP_AFTER)
    deadline = time.monotonic() + SAFETY_TIMEOUT
    while once is not None and not once():
        assert not call.done() and time.monotonic() < deadline, "the call ended before the stop"
        await asyncio.sleep(0.01)
    assert not call.done()  # it still waits
    stop.abort()
    began = time.monotonic()
    with contextlib.suppress(Exception):  # the loop reads a stopped call as interrupted
        await call
    return time.monotonic() - began
