"""How many git processes a snapshot starts: in a small repository each one's start costs
more than git's work (docs/benchmarks.md, issue 47 item 3), so the count is held here."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from di_code.session.git_run import REF_PREFIX, top_and_refs
from di_code.session.git_snapshot import GitSnapshots, Snapshot
from di_code.session.stat_cache import StatCache
from tests.support.git import git, logging_git, past_this_second, subcommands


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    hour_ago = time.time() - 3600  # older than the racy window: the private index keeps them
    for n in range(5):
        (repo / f"f{n}.txt").write_text(f"file {n}\n")
        os.utime(repo / f"f{n}.txt", (hour_ago, hour_ago))
    git(repo, "add", "-A")
    past_this_second()  # their status changed before the snapshot's second: stat data kept
    return repo


def snapshot(repo: Path, home: Path, session: str = "s") -> Snapshot:
    """A prompt's snapshot in a new run, as `Checkpointer` takes it (scripts/bench, figure 9):
    the work tree found with this home's refs, which the prune takes."""
    cache = StatCache(home / "cache.json")
    found = top_and_refs(repo, REF_PREFIX)
    assert found is not None
    snapshots = GitSnapshots(found.path, stat_cache=cache, refs_listed=found.refs)
    snapshots.refs.prune({"s", session})
    taken = snapshots.take(ignored=False)
    snapshots.refs.keep(session, taken.tree)
    cache.save()
    return taken


def test_a_few_changed_files_cost_one_writer_and_a_ref(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unchanged tree: the work tree's top with this home's refs (one `rev-parse`), the
    listing, git's stat comparison (against a private index of time 0: no filter driver to
    empty first). A few changed files: their blobs go to fast-import without asking git which
    it lacks (it writes none it holds), and the same fast-import puts them in the last tree
    (no `write-tree`); then the new tree's ref."""
    first = snapshot(repo, tmp_path)
    log = tmp_path / "git.log"
    monkeypatch.setenv("PATH", f"{logging_git(tmp_path / 'bin', log)}:{os.environ['PATH']}")
    assert snapshot(repo, tmp_path).tree == first.tree
    assert sorted(subcommands(log)) == ["diff-files", "ls-files", "rev-parse"]
    log.unlink()
    (repo / "f1.txt").write_text("changed, and longer\n")
    (repo / "f2.txt").write_text("file 0\n")  # a blob the repository holds
    changed = snapshot(repo, tmp_path)
    writes = ["diff-files", "fast-import", "ls-files", "rev-parse", "update-ref"]
    assert sorted(subcommands(log)) == writes
    listed = git(repo, "ls-tree", "-r", changed.tree)
    blob = git(repo, "hash-object", "--no-filters", "f1.txt").strip()
    assert f"{blob}\tf1.txt" in listed
    assert git(repo, "cat-file", "-p", f"{changed.tree}:f2.txt") == "file 0\n"


def test_blobs_the_repository_holds_are_not_written_again(repo: Path, tmp_path: Path) -> None:
    """Files changed back to bytes the repository holds (loose or packed) add no blob: only
    the new tree and the commit fast-import made it with (no ref names it)."""
    (repo / "f1.txt").write_text("a blob that will be loose\n")
    snapshot(repo, tmp_path)
    git(repo, "gc", "-q")
    (repo / "f3.txt").write_text("yet another\n")
    snapshot(repo, tmp_path)  # a loose blob beside the pack
    before = git(repo, "count-objects", "-v")
    (repo / "f1.txt").write_text("file 1\n")  # packed (the index's blob)
    (repo / "f3.txt").write_text("file 3\n")
    (repo / "f2.txt").write_text("yet another\n")  # loose
    taken = snapshot(repo, tmp_path)
    after = git(repo, "count-objects", "-v")
    counts = [dict(line.split(": ") for line in out.splitlines()) for out in (before, after)]
    assert int(counts[1]["count"]) == int(counts[0]["count"]) + 2  # the new tree, its commit
    assert counts[1]["packs"] == counts[0]["packs"]
    assert git(repo, "cat-file", "-p", f"{taken.tree}:f2.txt") == "yet another\n"
