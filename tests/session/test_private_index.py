"""The private index the snapshots keep (session/index_file, stat_cache): git reads it as an
index of its own, its stat data tells git which files changed, and no setting of the
repository's, no damage to it and no change made within the same second hides a change."""

from __future__ import annotations

import os
from pathlib import Path

from di_code.session.git_snapshot import GitSnapshots
from di_code.session.stat_cache import StatCache
from tests.support.git import git, past_this_second
from tests.support.undo_driver import new_repo

HOUR_AGO = 1_700_000_000


def snapshot(repo: Path, cache: Path) -> tuple[str, StatCache]:
    """One run's snapshot of `repo` with the cache a previous run left in `cache`."""
    stat_cache = StatCache(cache)
    tree = GitSnapshots(repo, stat_cache=stat_cache).take().tree
    stat_cache.save()
    return tree, stat_cache


def old_files(repo: Path, *names: str) -> None:
    """Give `names` an old mtime, and wait until their status change is of an earlier second."""
    for name in names:
        os.utime(repo / name, (HOUR_AGO, HOUR_AGO), follow_symlinks=False)
    past_this_second()


def test_git_reads_the_private_index_as_the_tree_and_sees_no_change_in_it(tmp_path: Path) -> None:
    """The index di-code writes is one git reads: the tree's entries, no stat change seen in
    an unchanged tree, a changed file named; the changed file's entry is then made again in
    place, without the tree cache git added (it would name the old blob)."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "d/new\nline": "n\n", "run.sh": "x\n"})
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("a.txt")
    (repo / "untracked.txt").write_text("u\n")
    old_files(repo, "a.txt", "d/new\nline", "run.sh", "link", "untracked.txt")
    tree, stat_cache = snapshot(repo, tmp_path / "cache" / "repo.json")
    env = {"GIT_INDEX_FILE": str(stat_cache.index)}
    indexed = git(repo, "ls-files", "-s", "-z", env=env).replace(" 0\t", "\t")
    assert indexed == git(repo, "ls-tree", "-r", "-z", tree).replace(" blob ", " ")
    assert git(repo, "write-tree", env=env).strip() == tree
    assert git(repo, "diff-files", "--name-only", "-z", env=env) == ""
    assert oct(stat_cache.index.stat().st_mode & 0o777) == "0o600"
    (repo / "a.txt").write_text("b\n")
    assert git(repo, "diff-files", "--name-only", "-z", env=env) == "a.txt\0"
    changed, _ = snapshot(repo, tmp_path / "cache" / "repo.json")  # the same paths: patched
    assert git(repo, "cat-file", "-p", f"{changed}:a.txt") == "b\n"  # no tree cache kept
    indexed = git(repo, "ls-files", "-s", "-z", env=env).replace(" 0\t", "\t")
    assert indexed == git(repo, "ls-tree", "-r", "-z", changed).replace(" blob ", " ")


def test_a_change_that_keeps_size_and_mtime_is_seen_whatever_the_repository_says(
    tmp_path: Path,
) -> None:
    """The repository's config cannot make git skip a field of the stat data: ctime, inode,
    the executable bit."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "aaaa\n", "b.sh": "b\n"})
    for setting in ("core.trustctime=false", "core.checkStat=minimal", "core.fileMode=false"):
        git(repo, "config", *setting.split("="))
    old_files(repo, "a.txt", "b.sh")
    cache = tmp_path / "cache" / "repo.json"
    before, _ = snapshot(repo, cache)
    (repo / "a.txt").write_text("bbbb\n")
    (repo / "b.sh").chmod(0o755)
    os.utime(repo / "a.txt", (HOUR_AGO, HOUR_AGO))  # the same size and mtime as before
    after, _ = snapshot(repo, cache)
    listed = git(repo, "ls-tree", "-r", after)
    assert (
        git(repo, "rev-parse", f"{after}:a.txt").strip()
        != git(repo, "rev-parse", f"{before}:a.txt").strip()
    )
    assert "100755 blob" in next(line for line in listed.splitlines() if line.endswith("b.sh"))


def test_a_file_changed_twice_within_a_second_is_seen_the_second_time(tmp_path: Path) -> None:
    """git may compare whole seconds only: a file whose status changed in the snapshot's own
    second gets no stat data, so a change of the same size in that second is still seen."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "1111\n"})
    cache = tmp_path / "cache" / "repo.json"
    os.utime(repo / "a.txt", (HOUR_AGO, HOUR_AGO))  # its ctime is now
    first, _ = snapshot(repo, cache)
    (repo / "a.txt").write_text("2222\n")
    os.utime(repo / "a.txt", (HOUR_AGO, HOUR_AGO))
    second, _ = snapshot(repo, cache)
    assert git(repo, "cat-file", "-p", f"{second}:a.txt") == "2222\n" and second != first


def test_a_damaged_private_index_is_made_again(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    old_files(repo, "a.txt", "b.txt")
    cache = tmp_path / "cache" / "repo.json"
    tree, stat_cache = snapshot(repo, cache)
    stat_cache.index.write_bytes(stat_cache.index.read_bytes()[:50])
    (repo / "b.txt").write_text("c\n")
    again, stat_cache = snapshot(repo, cache)
    assert git(repo, "cat-file", "-p", f"{again}:b.txt") == "c\n"
    assert git(repo, "cat-file", "-p", f"{again}:a.txt") == "a\n"
    env = {"GIT_INDEX_FILE": str(stat_cache.index)}
    assert git(repo, "write-tree", env=env).strip() == again != tree


def test_an_index_another_process_replaced_after_git_compared_is_not_trusted(
    tmp_path: Path,
) -> None:
    """Two runs on one repository: between git's comparison of this run's index and its read,
    another run (which began from an older index) replaced it. Its entries are not known to
    match the files, so they are read again, not taken."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "one\n"})
    old_files(repo, "a.txt")
    cache = tmp_path / "cache" / "repo.json"
    _, stat_cache = snapshot(repo, cache)
    older = stat_cache.index.read_bytes()  # a.txt as "one", with its stat data then
    (repo / "a.txt").write_text("two\n")
    old_files(repo, "a.txt")
    snapshot(repo, cache)
    stat_cache = StatCache(cache)
    snapshots = GitSnapshots(repo, stat_cache=stat_cache)
    assert snapshots._stat_changed() == {}  # git compared the files with the newest index
    (tmp_path / "older").write_bytes(older)
    os.replace(tmp_path / "older", stat_cache.index)  # the other run's write
    tree, _ = snapshots._captured(["a.txt"], {})
    assert git(repo, "cat-file", "-p", f"{tree}:a.txt") == "two\n"


def test_the_staged_copies_a_killed_run_left_are_removed_and_no_other(tmp_path: Path) -> None:
    """A run killed between staging its copy of the index and putting it in place leaves the
    copy (and git's lock on it): the next run removes those of processes that are gone, once
    an hour old; a live process's copy, or one just written, stays."""
    import subprocess
    import sys

    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n"})
    index = StatCache(tmp_path / "cache" / "repo.json").index
    index.parent.mkdir(parents=True)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    names = {
        "killed": f"{index.name}.{gone}.1.tmp",
        "killed lock": f"{index.name}.{gone}.1.tmp.lock",
        "just written": f"{index.name}.{gone}.2.tmp",
        "live": f"{index.name}.{os.getpid()}.3.tmp",
        "not a copy": "other.index.7.1.tmp",
    }
    for name in names.values():
        (index.parent / name).write_bytes(b"x" * 100)
    for kind in ("killed", "killed lock", "live", "not a copy"):
        os.utime(index.parent / names[kind], (HOUR_AGO, HOUR_AGO))
    snapshot(repo, tmp_path / "cache" / "repo.json")
    left = {kind for kind, name in names.items() if (index.parent / name).exists()}
    assert left == {"just written", "live", "not a copy"}
