"""`git diff-files` against di-code's private index reads no file's content, so no filter the
repository names can run, and the runner does not ask git for the filter drivers to empty
first (one git process fewer per snapshot: docs/benchmarks.md, issue 47 item 3).

git reads a file to compare it only for a "racily clean" entry: stat data that matches and an
mtime as late as the index file's. An index file whose mtime is 0 (as di-code writes its
private one) makes git take no entry for racily clean."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from di_code.session.git_run import git_env
from di_code.session.git_snapshot import GitSnapshots
from di_code.session.stat_cache import StatCache
from tests.support.git import git, logging_git, past_this_second, subcommands
from tests.support.undo_cli import planted


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose config and attributes name a clean filter that leaves a marker."""
    program, _ = planted(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    with (repo / ".git" / "config").open("a") as config:
        config.write(f'[filter "x"]\n\tclean = {program}\n\tsmudge = {program}\n')
    (repo / ".gitattributes").write_text("* filter=x\n")
    hour_ago = time.time() - 3600  # older than the racy window: the private index keeps them
    for n in range(3):
        (repo / f"f{n}.txt").write_text(f"file {n}\n")
        os.utime(repo / f"f{n}.txt", (hour_ago, hour_ago))
    past_this_second()
    return repo


def plain_diff_files(repo: Path, index: Path) -> str:
    """git's own `diff-files` against `index`, nothing blanked (the premise, shown on git)."""
    env = {**git_env(str(index)), "GIT_INDEX_FILE": str(index)}
    return git(repo, "diff-files", "--name-only", env=env)


def test_git_reads_a_racily_clean_entry_through_its_filter_unless_the_index_is_of_time_0(
    repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "it-ran"
    index = tmp_path / "plain.index"
    git(repo, "update-index", "--add", "f0.txt", env={"GIT_INDEX_FILE": str(index)})
    entry_time = (repo / "f0.txt").stat().st_mtime
    os.utime(index, (entry_time, entry_time))  # the entry's mtime is the index's: racy
    marker.unlink(missing_ok=True)  # update-index ran it
    assert plain_diff_files(repo, index) == ""
    assert marker.exists()  # git read f0.txt through the filter to compare it
    marker.unlink()
    os.utime(index, ns=(0, 0))
    assert plain_diff_files(repo, index) == ""
    assert not marker.exists()


def test_snapshots_compare_without_emptying_filters_and_run_none(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The private index di-code writes is of time 0: its comparison needs no `config`; one
    given a racy time (not written by di-code) is compared with the filters emptied."""
    marker = tmp_path / "it-ran"
    cache = StatCache(tmp_path / "home" / "cache.json")
    first = GitSnapshots(repo, stat_cache=cache).take(ignored=False)
    assert cache.index.stat().st_mtime_ns == 0
    log = tmp_path / "git.log"
    monkeypatch.setenv("PATH", f"{logging_git(tmp_path / 'bin', log)}:{os.environ['PATH']}")
    (repo / "f1.txt").write_text("FILE 1\n")  # same size, later times: git names it
    changed = GitSnapshots(repo, stat_cache=cache).take(ignored=False)
    assert changed.tree != first.tree
    assert "diff-files" in subcommands(log) and "config" not in subcommands(log)
    assert git(repo, "cat-file", "-p", f"{changed.tree}:f1.txt") == "FILE 1\n"
    log.unlink()
    now = time.time()
    os.utime(cache.index, (now, now))  # every entry older than it: none racy, still asked
    assert GitSnapshots(repo, stat_cache=cache).take(ignored=False).tree == changed.tree
    assert "config" in subcommands(log)
    assert not marker.exists()
