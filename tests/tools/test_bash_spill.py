"""Bash spill files: where they go, how big one may grow, and when they are removed."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from di_code.tools.builtin.bash import BashPolicy, BashTool
from di_code.tools.builtin.support.spill import SUFFIX, SpillFolder
from di_code.tools.common.workspace import Workspace
from tests.tools.conftest import run, text_of

DAY = 24 * 3600.0


def bash_spilling_to(workspace: Path, folder: SpillFolder) -> BashTool:
    return BashTool(Workspace.create(workspace), BashPolicy(spill=folder))


def old_file(path: Path, size: int, age: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


async def test_without_a_session_spills_go_to_a_private_di_code_temp_folder(
    workspace: Path,
) -> None:
    result = await run(bash_spilling_to(workspace, SpillFolder()), {"command": "seq 1 3000"})
    spill = Path(result.details["full_output_path"])
    try:
        private = Path(tempfile.gettempdir()) / f"di-code-{os.getuid()}"
        assert spill.parent == private / "bash-output"
        assert private.stat().st_mode & 0o077 == 0
    finally:
        spill.unlink()


async def test_one_spill_file_stops_at_its_cap_and_the_tail_is_still_right(
    workspace: Path, tmp_path: Path
) -> None:
    folder = SpillFolder(tmp_path / "spills", file_cap=1_000_000)
    result = await run(bash_spilling_to(workspace, folder), {"command": "seq 1 400000"})
    spill = Path(result.details["full_output_path"])
    assert spill.stat().st_size == 1_000_000
    assert spill.read_bytes() == "".join(f"{i}\n" for i in range(1, 400001)).encode()[:1_000_000]
    body, where, cut = text_of(result).split("\n\n")
    assert body.split("\n")[-1] == "400000"
    assert where.startswith("[Showing lines 398001-400000 of 400000.")
    assert cut == "[The output file keeps only the first 1000000 bytes; the rest was not saved.]"


async def test_the_oldest_spills_go_so_that_the_folder_stays_under_its_total_cap(
    workspace: Path, tmp_path: Path
) -> None:
    root = tmp_path / "spills"
    files = [old_file(root / f"bash-{n}.log", 400_000, age=3600 - n) for n in range(3)]
    folder = SpillFolder(root, file_cap=500_000, total_cap=1_500_000)
    result = await run(bash_spilling_to(workspace, folder), {"command": "seq 1 200000"})
    assert [path.exists() for path in files] == [False, True, True]
    assert Path(result.details["full_output_path"]).exists()
    assert sum(path.stat().st_size for path in root.iterdir()) <= 1_500_000


async def test_spills_past_the_retention_period_are_removed(
    workspace: Path, tmp_path: Path
) -> None:
    root = tmp_path / "spills"
    stale = old_file(root / "bash-stale.log", 10, age=8 * DAY)
    recent = old_file(root / "bash-recent.log", 10, age=DAY)
    await run(bash_spilling_to(workspace, SpillFolder(root)), {"command": "seq 1 3000"})
    assert not stale.exists()
    assert recent.exists()


async def test_spills_of_deleted_sessions_are_removed(workspace: Path, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    current = sessions / "ws-1" / "2026-01-03T00_c.jsonl"
    kept = sessions / "ws-2" / "2026-01-02T00_b.jsonl"
    for session in (current, kept):
        old_file(session, 10, age=0)
    deleted = old_file(sessions / "ws-2" / f"2026-01-01T00_a{SUFFIX}" / "bash-1.log", 10, age=0)
    kept_spill = old_file(kept.with_suffix(SUFFIX) / "bash-2.log", 10, age=0)
    stale_spill = old_file(kept.with_suffix(SUFFIX) / "bash-3.log", 10, age=8 * DAY)
    folder = SpillFolder.for_session(current)
    result = await run(bash_spilling_to(workspace, folder), {"command": "seq 1 3000"})
    assert Path(result.details["full_output_path"]).parent == current.with_suffix(SUFFIX)
    assert not deleted.parent.exists()
    assert kept_spill.exists()
    assert not stale_spill.exists()
