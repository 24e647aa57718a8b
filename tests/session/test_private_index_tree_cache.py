"""git's tree cache in the private index (session/index_file): a snapshot after a change keeps
the names git gave the trees of the folders nothing changed in, so `write-tree` makes only the
changed folders' trees again (it hashed every folder and looked up every blob when the cache
was dropped); a kept name never stands for a folder that changed, and a cache that cannot be
read is dropped, not trusted."""

from __future__ import annotations

import os
import time
from pathlib import Path

from di_code.session import index_file
from di_code.session.git_snapshot import GitSnapshots
from di_code.session.stat_cache import StatCache
from tests.support.git import git, past_this_second
from tests.support.undo_driver import new_repo

HOUR_AGO = 1_700_000_000
FILES = {"a/b/c.txt": "c\n", "a/d.txt": "d\n", "e/f.txt": "f\n", "g.txt": "g\n"}


def snapshot(repo: Path, cache: Path) -> tuple[str, StatCache]:
    """One run's snapshot of `repo` with the cache a previous run left in `cache`."""
    stat_cache = StatCache(cache)
    tree = GitSnapshots(repo, stat_cache=stat_cache).take().tree
    stat_cache.save()
    return tree, stat_cache


def aged_repo(folder: Path, files: dict[str, str]) -> Path:
    """A repository of `files`, each old enough (and its status of an earlier second) for the
    private index to keep its stat data, so git names only the files changed since."""
    repo = new_repo(folder, files)
    for name in files:
        os.utime(repo / name, (HOUR_AGO, HOUR_AGO))
    past_this_second()
    return repo


def patched_index(repo: Path, stat_cache: StatCache, changed: str) -> bytes:
    """The private index with `changed`'s entry made again for its new bytes (the blob written)."""
    blob = git(repo, "hash-object", "-w", "--no-filters", changed).strip()
    new = index_file.entry(changed.encode(), None, "100644", blob, time.time_ns())
    paths = sorted(name.encode() for name in FILES)
    data = index_file.patched(stat_cache.index.read_bytes(), "sha1", paths, [new])
    assert data is not None
    return data


def written_tree(repo: Path, index: bytes, where: Path) -> str:
    where.write_bytes(index)
    return git(repo, "write-tree", env={"GIT_INDEX_FILE": str(where)}).strip()


def test_a_changed_file_leaves_the_names_of_the_other_folders_trees(tmp_path: Path) -> None:
    repo = aged_repo(tmp_path / "repo", FILES)
    tree, stat_cache = snapshot(repo, tmp_path / "cache" / "repo.json")
    assert b"TREE" in stat_cache.index.read_bytes()  # git's write-tree named every tree
    (repo / "a/b/c.txt").write_text("changed\n")
    data = patched_index(repo, stat_cache, "a/b/c.txt")
    unchanged = bytes.fromhex(git(repo, "rev-parse", f"{tree}:e").strip())
    assert b"e\0" + b"1 0\n" + unchanged in data  # one entry, no subtree: its name kept
    for folder in (b"a\0-1 1\n", b"b\0-1 0\n"):  # the changed file's folders, to be made again
        assert folder in data
    assert data.index(b"TREE") + 8 == data.index(b"\0-1 2\n")  # the top, first, too
    made = written_tree(repo, data, tmp_path / "patched.index")
    assert git(repo, "cat-file", "-p", f"{made}:a/b/c.txt") == "changed\n"
    fresh, _ = snapshot(repo, tmp_path / "fresh" / "repo.json")  # every file hashed anew
    assert made == fresh


def test_a_tree_cache_that_cannot_be_read_is_left_out(tmp_path: Path) -> None:
    repo = aged_repo(tmp_path / "repo", FILES)
    _, stat_cache = snapshot(repo, tmp_path / "cache" / "repo.json")
    data = stat_cache.index.read_bytes()
    at = data.index(b"TREE") + 8
    damaged = data[:at] + data[at:].replace(b" 2\n", b" 9\n", 1)  # more subtrees than follow
    body = damaged[:-20]
    stat_cache.index.write_bytes(body + index_file.checksum(body + bytes(20), "sha1"))
    (repo / "e/f.txt").write_text("changed\n")
    data = patched_index(repo, stat_cache, "e/f.txt")
    assert b"TREE" not in data
    made = written_tree(repo, data, tmp_path / "patched.index")
    assert git(repo, "cat-file", "-p", f"{made}:e/f.txt") == "changed\n"


def test_snapshots_after_changes_in_nested_folders_are_the_files_as_they_are(
    tmp_path: Path,
) -> None:
    """Round after round, files changed in some folders (bytes, the executable bit): each
    snapshot from the patched index is the tree a snapshot that hashes every file makes."""
    files = {f"{top}/{mid}/f{n}.txt": f"{n}\n" for top in "pq" for mid in "xyz" for n in range(3)}
    repo = aged_repo(tmp_path / "repo", {**files, "top.txt": "t\n"})
    cache = tmp_path / "cache" / "repo.json"
    snapshot(repo, cache)
    rounds = [["p/x/f0.txt"], ["q/z/f2.txt", "top.txt"], ["p/y/f1.txt", "p/y/f2.txt"]]
    for number, changed in enumerate(rounds):
        for name in changed:
            (repo / name).write_text(f"round {number}\n")
        (repo / "q/x/f1.txt").chmod(0o755 if number % 2 == 0 else 0o644)
        for name in [*changed, "q/x/f1.txt"]:
            os.utime(repo / name, (HOUR_AGO, HOUR_AGO))
        past_this_second()
        tree, _ = snapshot(repo, cache)
        fresh, _ = snapshot(repo, tmp_path / f"fresh{number}" / "repo.json")
        assert tree == fresh
