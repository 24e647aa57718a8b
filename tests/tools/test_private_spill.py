"""Issue 23 §8: bash's spill files are private whatever the umask, and a spill folder another
user made in the shared temp folder is never used: bash still works, in a private stand-in."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from di_code.tools.builtin.bash import BashPolicy, BashTool
from di_code.tools.builtin.support.spill import SpillFolder
from di_code.tools.common.workspace import Workspace
from tests.tools.conftest import run

NOBODY = 65534


@pytest.fixture
def shared_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp folder like /tmp (anyone may write, sticky), as `tempfile` sees it."""
    folder = tmp_path / "shared-tmp"
    folder.mkdir()
    folder.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def spill(workspace: Path, folder: SpillFolder) -> Path:
    tool = BashTool(Workspace.create(workspace), BashPolicy(spill=folder))
    result = await run(tool, {"command": "seq 1 3000"})
    assert not result.is_error, result.content
    return Path(result.details["full_output_path"])


async def test_spill_files_are_private_whatever_the_umask(
    workspace: Path, shared_tmp: Path, open_umask: None
) -> None:
    path = await spill(workspace, SpillFolder())
    base = shared_tmp / f"di-code-{os.getuid()}"
    assert path.parent == base / "bash-output"
    assert (mode(path), mode(path.parent), mode(base)) == (0o600, 0o700, 0o700)
    assert mode(shared_tmp) == 0o1777  # the shared folder above is left alone


async def test_a_session_spill_folder_is_private_whatever_the_umask(
    workspace: Path, tmp_path: Path, open_umask: None
) -> None:
    session = tmp_path / "sessions" / "proj" / "2026_x.jsonl"
    path = await spill(workspace, SpillFolder.for_session(session))
    assert path.parent == session.with_suffix(".bash-output")
    assert (mode(path), mode(path.parent), mode(session.parent)) == (0o600, 0o700, 0o700)


@pytest.mark.skipif(os.getuid() != 0, reason="making a folder another user's needs root")
@pytest.mark.parametrize("folder_mode", [0o700, 0o777])
async def test_a_spill_folder_another_user_made_is_not_used(
    workspace: Path,
    shared_tmp: Path,
    capfd: pytest.CaptureFixture[str],
    folder_mode: int,
) -> None:
    planted = shared_tmp / f"di-code-{os.getuid()}"
    (planted / "bash-output").mkdir(parents=True)
    for folder in (planted, planted / "bash-output"):
        os.chown(folder, NOBODY, NOBODY)
        folder.chmod(folder_mode)
    first = await spill(workspace, SpillFolder())
    second = await spill(workspace, SpillFolder())
    assert not first.is_relative_to(planted)
    assert first.parent == second.parent
    assert mode(first) == 0o600 and mode(first.parent) == 0o700
    assert first.parent.stat().st_uid == os.getuid()
    assert os.listdir(planted / "bash-output") == []
    notes = capfd.readouterr().err.splitlines()
    assert notes == [
        f"di-code: not using {planted / 'bash-output'}: another user owns "
        f"{planted / 'bash-output'}; using {first.parent}"
    ]


@pytest.mark.skipif(os.getuid() != 0, reason="making a folder another user's needs root")
async def test_a_symlink_another_user_planted_is_not_followed(
    workspace: Path, shared_tmp: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "mine"
    target.mkdir(mode=0o700)
    planted = shared_tmp / f"di-code-{os.getuid()}"
    planted.symlink_to(target)
    os.lchown(planted, NOBODY, NOBODY)
    path = await spill(workspace, SpillFolder())
    assert not path.is_relative_to(target) and os.listdir(target) == []
    assert "another user owns" in capfd.readouterr().err
