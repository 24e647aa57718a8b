"""What undo cannot read is one line, never a traceback: snapshots git lost (refs deleted by
hand, then `gc`) make the plan say so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from di_code.session.undo_plan import NothingToUndo
from tests.support.git import git
from tests.support.undo_driver import Driver, new_repo


async def test_snapshots_git_lost_are_one_line(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    (repo / "untracked.txt").write_text("only in the snapshots\n")
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: (repo / "untracked.txt").write_text("changed\n"))
    refs = git(repo, "for-each-ref", "--format=delete %(refname)", "refs/di-code/")
    for line in refs.splitlines():
        git(repo, "update-ref", "-d", line.split()[1])
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    with pytest.raises(NothingToUndo, match="the snapshots could not be read: git") as lost:
        driver.undo()
    assert len(str(lost.value).splitlines()) == 1, str(lost.value)


async def test_a_work_tree_that_is_gone_is_one_line(tmp_path: Path) -> None:
    """The repository was removed after the prompt (its files stay, not its .git)."""
    repo = new_repo(tmp_path / "repo")
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: (repo / "a.txt").write_text("changed\n"))
    shutil.rmtree(repo / ".git")
    with pytest.raises(NothingToUndo) as gone:
        driver.undo()
    assert str(gone.value) == "this checkpoint was taken in a git work tree that is gone"
    assert (repo / "a.txt").read_text() == "changed\n"
