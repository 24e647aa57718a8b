"""The tree of a snapshot in which a few files changed, made by the fast-import that writes their
blobs (session/blob_import.TreeEdit) from the last snapshot's tree: it is always the tree a
snapshot that hashes every file anew makes, whatever the changed files are called or are (a
name with a line break, a quote, bytes that are not UTF-8; a link; the executable bit), it
writes no ref, and a last tree git no longer holds is not built on."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.git import git, logging_git, past_this_second, subcommands
from tests.support.snapshot_runs import snapshot
from tests.support.undo_driver import new_repo

HOUR_AGO = 1_700_000_000


def aged(repo: Path, *names: str) -> None:
    """Make `names` old (and their status of an earlier second), so the private index keeps
    their stat data and git names only the files changed since."""
    for name in names:
        os.utime(repo / name, (HOUR_AGO, HOUR_AGO), follow_symlinks=False)
    past_this_second()


def fresh(repo: Path, folder: Path) -> str:
    """The tree a snapshot with no private index makes (every file hashed anew)."""
    return snapshot(repo, folder / "cache.json")


def test_files_of_any_name_and_kind_changed_make_the_tree_hashing_all_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["plain.txt", "sub/new\nline.txt", 'sub/"quoted".txt', "sub/back\\slash", "lead space"]
    names += ["deep/a/b/c.txt", "run.sh", os.fsdecode(b"bytes-\xff\xfe.txt")]
    repo = new_repo(tmp_path / "repo", {name: f"{name!r}\n" for name in names})
    (repo / "link").symlink_to("plain.txt")
    aged(repo, *names, "link")
    cache = tmp_path / "cache" / "repo.json"
    first = snapshot(repo, cache)
    for name in names:
        (repo / name).write_text(f"changed {name!r}\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link").unlink()
    (repo / "link").symlink_to("sub")
    aged(repo, *names, "link")
    log = tmp_path / "git.log"
    monkeypatch.setenv("PATH", f"{logging_git(tmp_path / 'bin', log)}:{os.environ['PATH']}")
    changed = snapshot(repo, cache)
    assert "write-tree" not in subcommands(log)  # built on the last tree, not made again
    assert not list((repo / ".git").glob("fast_import_crash_*"))
    assert changed != first
    assert changed == fresh(repo, tmp_path / "fresh")
    assert git(repo, "cat-file", "-p", f"{changed}:plain.txt") == "changed 'plain.txt'\n"
    assert git(repo, "cat-file", "-p", f"{changed}:link") == "sub"
    assert "100755 blob" in git(repo, "ls-tree", changed, "run.sh")


def test_snapshots_after_changes_in_nested_folders_are_the_files_as_they_are(
    tmp_path: Path,
) -> None:
    """Round after round, files changed in some folders (bytes, the executable bit): each
    snapshot built on the last tree is the tree a snapshot that hashes every file makes."""
    files = {f"{top}/{mid}/f{n}.txt": f"{n}\n" for top in "pq" for mid in "xyz" for n in range(3)}
    repo = new_repo(tmp_path / "repo", {**files, "top.txt": "t\n"})
    aged(repo, *files, "top.txt")
    cache = tmp_path / "cache" / "repo.json"
    snapshot(repo, cache)
    rounds = [["p/x/f0.txt"], ["q/z/f2.txt", "top.txt"], ["p/y/f1.txt", "p/y/f2.txt"]]
    for number, changed in enumerate(rounds):
        for name in changed:
            (repo / name).write_text(f"round {number}\n")
        (repo / "q/x/f1.txt").chmod(0o755 if number % 2 == 0 else 0o644)
        aged(repo, *changed, "q/x/f1.txt")
        assert snapshot(repo, cache) == fresh(repo, tmp_path / f"fresh{number}")


def test_the_tree_is_made_without_writing_a_ref(tmp_path: Path) -> None:
    """fast-import builds the tree on a branch it never writes: the repository's refs are as
    they were, one of that branch's name included."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "d/b.txt": "b\n"})
    aged(repo, "a.txt", "d/b.txt")
    cache = tmp_path / "cache" / "repo.json"
    snapshot(repo, cache)
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-ref", "refs/di-code/tree-edit", head)
    refs = git(repo, "for-each-ref")
    (repo / "d/b.txt").write_text("changed\n")
    aged(repo, "d/b.txt")
    changed = snapshot(repo, cache)
    assert git(repo, "cat-file", "-p", f"{changed}:d/b.txt") == "changed\n"
    assert git(repo, "for-each-ref") == refs
    assert not list((repo / ".git").glob("fast_import_crash_*"))


def test_a_last_tree_git_no_longer_holds_is_not_built_on(tmp_path: Path) -> None:
    """The last snapshot's tree was pruned (nothing kept it): the next snapshot after a change
    reads what git saw change and makes the tree from the private index, with no failed
    fast-import (it would leave a crash report in the repository)."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "d/b.txt": "b\n"})
    (repo / "untracked.txt").write_text("u\n")
    aged(repo, "a.txt", "d/b.txt", "untracked.txt")
    cache = tmp_path / "cache" / "repo.json"
    first = snapshot(repo, cache)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    assert subprocess.run(["git", "cat-file", "-e", first], cwd=repo).returncode != 0  # pruned
    (repo / "d/b.txt").write_text("changed\n")
    aged(repo, "d/b.txt")
    changed = snapshot(repo, cache)
    assert changed == fresh(repo, tmp_path / "fresh")
    assert git(repo, "cat-file", "-p", f"{changed}:untracked.txt") == "u\n"
    assert not list((repo / ".git").glob("fast_import_crash_*"))


def test_files_touched_but_as_they_were_start_no_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git names a file whose times changed (or that was written within the racy window of
    the last snapshot); read again, its bytes and mode are the tree's: the tree stays, with
    no fast-import and no object (a commit for it would be one)."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "d/b.txt": "b\n"})
    aged(repo, "a.txt", "d/b.txt")
    cache = tmp_path / "cache" / "repo.json"
    first = snapshot(repo, cache)
    objects = git(repo, "count-objects", "-v")
    os.utime(repo / "d/b.txt", (HOUR_AGO + 60, HOUR_AGO + 60))
    past_this_second()
    log = tmp_path / "git.log"
    monkeypatch.setenv("PATH", f"{logging_git(tmp_path / 'bin', log)}:{os.environ['PATH']}")
    assert snapshot(repo, cache) == first
    assert "fast-import" not in subcommands(log)
    assert git(repo, "count-objects", "-v") == objects
