"""File tools under faults (issue 14): a failed write keeps the old file, a hardlink from outside
is never written through, a FIFO does not hang, and a swapped symlink never leads outside."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from di_code.agent import AgentTool
from tests.support.permission_faults import needs_permission_faults
from tests.tools.conftest import error_of, run, text_of

FILE_LIMIT = 4096

_CHILD = """
import asyncio, json, resource, signal, sys
from collections.abc import Callable
from pathlib import Path
from di_code.ai import AbortController
from di_code.tools import default_tools
from di_code.tools.common.errors import ToolError

workspace, name, params = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
tool = {tool.name: tool for tool in default_tools(workspace)}[name]
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[4]), int(sys.argv[4])))
try:
    asyncio.run(tool.execute("call-1", params, AbortController().signal))
    print("ok")
except ToolError as exc:
    print(exc)
"""


def run_limited(workspace: Path, tool: str, params: dict[str, Any]) -> str:
    """Run one tool in a child process whose files may not grow past FILE_LIMIT bytes (with
    SIGXFSZ ignored, so writes fail with EFBIG instead of killing it); what it printed."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    args = [str(workspace), tool, json.dumps(params), str(FILE_LIMIT)]
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_write_past_the_file_size_limit_keeps_the_old_file(workspace: Path) -> None:
    old = "old line\n" * 100
    (workspace / "f.txt").write_text(old)
    message = run_limited(workspace, "write", {"path": "f.txt", "content": "x" * 3 * FILE_LIMIT})
    assert message == "Cannot write f.txt: File too large; the file is unchanged"
    assert (workspace / "f.txt").read_text() == old
    assert os.listdir(workspace) == ["f.txt"]


def test_a_new_file_past_the_limit_leaves_nothing_behind(workspace: Path) -> None:
    message = run_limited(workspace, "write", {"path": "new.txt", "content": "x" * 3 * FILE_LIMIT})
    assert message == "Cannot write new.txt: File too large; the file is unchanged"
    assert os.listdir(workspace) == []


def test_an_edit_past_the_file_size_limit_keeps_the_old_file(workspace: Path) -> None:
    old = "".join(f"line {i}\n" for i in range(300))
    (workspace / "f.txt").write_text(old)
    params = {"path": "f.txt", "old_text": "line 7\n", "new_text": "y" * 2 * FILE_LIMIT}
    message = run_limited(workspace, "edit", params)
    assert message == "Cannot write f.txt: File too large; the file is unchanged"
    assert (workspace / "f.txt").read_text() == old
    assert os.listdir(workspace) == ["f.txt"]


def test_a_write_within_the_limit_still_works_in_the_child(workspace: Path) -> None:
    assert run_limited(workspace, "write", {"path": "f.txt", "content": "small"}) == "ok"
    assert (workspace / "f.txt").read_text() == "small"


FILE_TOOLS: dict[str, dict[str, Any]] = {
    "read": {},
    "write": {"content": "value = new"},
    "edit": {"old_text": "value = ", "new_text": "value := "},
}


@pytest.mark.parametrize("tool_name", ["write", "edit"])
async def test_a_hardlink_from_outside_is_replaced_not_written_through(
    tools: dict[str, AgentTool], workspace: Path, tmp_path: Path, tool_name: str
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("value = outside")
    os.link(outside, workspace / "hard.txt")
    await run(tools[tool_name], {"path": "hard.txt", **FILE_TOOLS[tool_name]})
    assert (workspace / "hard.txt").read_text() != "value = outside"
    assert outside.read_text() == "value = outside"


@pytest.mark.parametrize("tool_name", ["write", "edit"])
async def test_mode_and_owner_are_kept_and_new_files_get_the_usual_mode(
    tools: dict[str, AgentTool], workspace: Path, tool_name: str
) -> None:
    kept = workspace / "kept.txt"
    kept.write_text("value = old")
    owner = (12345, 23456) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(kept, *owner)
    kept.chmod(0o751)
    await run(tools[tool_name], {"path": "kept.txt", **FILE_TOOLS[tool_name]})
    assert kept.read_text() != "value = old"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o751
    assert (kept.stat().st_uid, kept.stat().st_gid) == owner
    (workspace / "touched").touch()
    await run(tools["write"], {"path": "fresh.txt", "content": "x"})
    assert (workspace / "fresh.txt").stat().st_mode == (workspace / "touched").stat().st_mode


@pytest.mark.parametrize("tool_name", sorted(FILE_TOOLS))
async def test_a_fifo_is_refused_without_blocking(
    tools: dict[str, AgentTool], workspace: Path, tool_name: str
) -> None:
    fifo = workspace / "pipe"
    os.mkfifo(fifo)
    try:
        message = await asyncio.wait_for(
            error_of(tools[tool_name], {"path": "pipe", **FILE_TOOLS[tool_name]}), timeout=10
        )
    finally:
        _release_fifo(fifo)
    assert message == "Not a regular file: pipe"
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def _while_a_write_makes(folder: Path, action: Callable[[], None]) -> None:
    """Do `action`, removing first the folder a write may have made at a missing `folder`."""
    while True:
        try:
            action()
        except OSError:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            return


def _release_fifo(fifo: Path) -> None:
    """Open both ends once without blocking, so a thread stuck opening the FIFO goes on."""
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    os.close(writer)
    os.close(reader)


CALLS = 400
HOLD = 0.00003
"""How long the swapper keeps each state, so that the tool runs between two swaps."""


@pytest.mark.parametrize("tool_name", sorted(FILE_TOOLS))
async def test_a_folder_swapped_for_a_symlink_never_leads_outside(
    tools: dict[str, AgentTool], workspace: Path, tmp_path: Path, tool_name: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "file.txt").write_text("value = outside")
    folder, parked = workspace / "sub", workspace / "parked"
    folder.mkdir()
    (folder / "file.txt").write_text("value = inside")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            folder.rename(parked)
            _while_a_write_makes(folder, lambda: folder.symlink_to(outside))
            time.sleep(HOLD)
            folder.unlink()
            _while_a_write_makes(folder, lambda: parked.rename(folder))
            time.sleep(HOLD)

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    outcomes: set[str] = set()
    try:
        for _ in range(CALLS):
            try:
                params = {"path": "sub/file.txt", **FILE_TOOLS[tool_name]}
                result = await run(tools[tool_name], params)
            except Exception as exc:
                outcomes.add(str(exc))
            else:
                outcomes.add(text_of(result))
    finally:
        stop.set()
        swapper.join(timeout=10)
    assert not any("value = outside" in outcome for outcome in outcomes), outcomes
    assert (outside / "file.txt").read_text() == "value = outside"


@needs_permission_faults
async def test_a_read_only_file_is_still_refused(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "locked.txt").write_text("value = old")
    (workspace / "locked.txt").chmod(0o444)
    for name in ("write", "edit"):
        params = {"path": "locked.txt", **FILE_TOOLS[name]}
        assert await error_of(tools[name], params) == "Permission denied: locked.txt"
    assert (workspace / "locked.txt").read_text() == "value = old"
