"""Hostile cases of the private index the snapshots keep (`snapshot-cache/<key>.index`): names
git's index format strains, stat data that lies, the index file itself damaged, linked or
locked between prompts, and repository settings about indexes. README (Undo): undo changes a
file only when it can prove the prompt's tools made the change and nobody changed it since,
and it restores the right bytes to the right file."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from di_code.session.git_snapshot import GitSnapshots
from di_code.session.stat_cache import StatCache
from tests.support.git import aged, git, past_this_second
from tests.support.undo_cli import planted
from tests.support.undo_driver import Driver, new_repo

HOUR_AGO = 1_700_000_000
NFC = unicodedata.normalize("NFC", "caf\u00e9.txt")
NFD = unicodedata.normalize("NFD", "caf\u00e9.txt")
HOSTILE_NAMES = ["new\nline.txt", "tab\there.txt", "-rf", " spaced ", NFC, NFD]


def private_index(home: Path) -> Path:
    (index,) = (home / "snapshot-cache").glob("*.index")
    return index


async def primed(tmp_path: Path, files: dict[str, str]) -> tuple[Driver, Path]:
    """A repository of `files` and a session whose first prompt left a private index with
    real stat data for all of them (the state every later prompt starts from)."""
    repo = new_repo(tmp_path / "repo", files)
    aged(repo)
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: None)
    return driver, repo


async def undone(driver: Driver, *changes: Callable[[], object]) -> list[str]:
    """Run a prompt of `changes`, then undo it; the paths undo failed on."""
    await driver.prompt(*changes)
    _, result = driver.undo()
    return result.failed


async def test_hostile_names_get_their_own_bytes_back(tmp_path: Path) -> None:
    """Names with a newline, a tab, a leading dash, spaces at both ends and NFC/NFD twins
    (two files here): each entry of the private index names its own file."""
    files = {name: f"{index}\n" for index, name in enumerate(HOSTILE_NAMES)}
    driver, repo = await primed(tmp_path, files)
    changes = [lambda n=name: (repo / n).write_text("model\n") for name in HOSTILE_NAMES]
    assert await undone(driver, *changes) == []
    assert {name: (repo / name).read_text() for name in HOSTILE_NAMES} == files


async def test_a_name_of_invalid_utf8_bytes_gets_its_bytes_back(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n"})
    raw = os.fsencode(str(repo)) + b"/bad\xff\xfe.txt"

    def write(data: bytes) -> None:
        with open(raw, "wb") as handle:
            handle.write(data)

    write(b"mine\n")
    aged(repo)
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: None)
    assert await undone(driver, lambda: write(b"model\n")) == []
    with open(raw, "rb") as handle:
        assert handle.read() == b"mine\n"


async def test_a_name_as_long_as_the_index_name_length_field_holds_is_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path of 4095 bytes, the most the index's 12-bit name length holds (and the most a
    path relative to the top may have): git then ends it at its NUL, and so does di-code."""
    parts = ["d" * 195] * 20  # 3,920 bytes of folders and slashes
    long_name = "/".join([*parts, "f" * (4095 - 20 * 196)])
    assert len(long_name) == 4095
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n"})
    monkeypatch.chdir(repo)  # the whole path is longer than PATH_MAX: reached from the top
    for depth in range(1, len(parts) + 1):
        os.mkdir("/".join(parts[:depth]))
    Path(long_name).write_text("mine\n")
    aged(repo)
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: None)
    assert await undone(driver, lambda: Path(long_name).write_text("model\n")) == []
    assert Path(long_name).read_text() == "mine\n"


async def test_a_change_of_the_same_size_with_the_mtime_put_back_is_still_the_users(
    tmp_path: Path,
) -> None:
    """After the prompt the user changes the tool's file (same size, `touch -d` back to the
    tool's mtime): the stat data di-code recorded lies about size and mtime, yet undo keeps
    the user's bytes (nobody may have changed it since is no longer provable)."""
    driver, repo = await primed(tmp_path, {"a.txt": "1111\n"})
    target = repo / "a.txt"

    def tool() -> None:
        target.write_text("2222\n")
        os.utime(target, (HOUR_AGO, HOUR_AGO))

    await driver.prompt(tool)
    past_this_second()
    await driver.prompt(lambda: None)  # a later snapshot records the tool's stat data
    target.write_text("3333\n")
    os.utime(target, (HOUR_AGO, HOUR_AGO))
    driver.undo(to=2)
    assert target.read_text() == "3333\n"


async def test_a_same_size_change_before_the_prompt_is_what_undo_restores(
    tmp_path: Path,
) -> None:
    """Between two prompts the user rewrites a file with the same size and old mtime; the
    next prompt's tool overwrites it: undo gives back the user's bytes, not the older ones
    the private index's stat data still describes."""
    driver, repo = await primed(tmp_path, {"a.txt": "1111\n"})
    target = repo / "a.txt"
    target.write_text("user\n")
    os.utime(target, (HOUR_AGO, HOUR_AGO))
    assert await undone(driver, lambda: target.write_text("tool\n")) == []
    assert target.read_text() == "user\n"


async def test_two_changes_within_one_second_are_each_seen(tmp_path: Path) -> None:
    """Two tool calls rewrite one file within the same second, the same size, the mtime put
    back each time: undo restores the first bytes."""
    driver, repo = await primed(tmp_path, {"a.txt": "1111\n"})
    target = repo / "a.txt"

    def write(text: str) -> Callable[[], None]:
        return lambda: (target.write_text(text), os.utime(target, (HOUR_AGO, HOUR_AGO)))[0]

    assert await undone(driver, write("2222\n"), write("3333\n")) == []
    assert target.read_text() == "1111\n"


@pytest.mark.parametrize("kind", ["symlink", "folder", "mode"])
async def test_a_file_replaced_by_another_kind_or_mode_is_restored(
    tmp_path: Path, kind: str
) -> None:
    driver, repo = await primed(tmp_path, {"a.txt": "mine\n", "b.txt": "b\n"})
    target = repo / "a.txt"

    def tool() -> None:
        if kind == "mode":
            target.chmod(0o755)
            return
        target.unlink()
        if kind == "symlink":
            target.symlink_to("b.txt")
        else:
            (target / "inside.txt").parent.mkdir()
            (target / "inside.txt").write_text("x\n")

    assert await undone(driver, tool) == []
    assert not target.is_symlink() and target.read_text() == "mine\n"
    assert target.stat().st_mode & 0o777 == 0o644


async def test_a_file_replaced_by_a_fifo_neither_hangs_nor_is_lost(tmp_path: Path) -> None:
    driver, repo = await primed(tmp_path, {"a.txt": "mine\n"})
    target = repo / "a.txt"
    await asyncio.wait_for(driver.prompt(lambda: (target.unlink(), os.mkfifo(target))), 120)
    driver.undo()
    assert target.read_text() == "mine\n"


def _truncated(index: Path) -> None:
    index.write_bytes(index.read_bytes()[:40])


def _linked(index: Path) -> None:
    secret = index.parent.parent.parent / "ssh" / "id_ed25519"
    secret.parent.mkdir()
    secret.write_bytes(b"KEY\n")
    index.unlink()
    index.symlink_to(secret)


def _linked_to_the_users_index(index: Path) -> None:
    index.unlink()
    index.symlink_to(index.parent.parent.parent / "repo" / ".git" / "index")


def _folder(index: Path) -> None:
    index.unlink()
    (index / "inside").mkdir(parents=True)


def _huge(index: Path) -> None:
    with open(index, "r+b") as handle:
        handle.truncate(1 << 30)  # sparse: a gigabyte of zeros after the real index


def _fifo(index: Path) -> None:
    index.unlink()
    os.mkfifo(index)


@pytest.mark.parametrize(
    "damage", [_truncated, _linked, _linked_to_the_users_index, _huge, _fifo, _folder]
)
async def test_a_damaged_private_index_costs_at_most_one_warning(
    tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    """Between two prompts the private index is truncated, made a link to a key, made huge
    or made a FIFO: the next prompt neither hangs nor writes through the link, says at most
    one warning, and its undo is right."""
    driver, repo = await primed(tmp_path, {"a.txt": "mine\n", "b.txt": "b\n"})
    users_index = (repo / ".git" / "index").read_bytes()
    index = private_index(tmp_path / "home")
    damage(index)
    try:
        await asyncio.wait_for(driver.prompt(lambda: (repo / "a.txt").write_text("x\n")), 120)
    finally:
        if index.is_fifo():  # release a reader still blocked on it (the test then fails)
            os.close(os.open(index, os.O_WRONLY | os.O_NONBLOCK))
    assert len(driver.warnings) <= 1
    _, result = driver.undo()
    assert result.failed == [] and (repo / "a.txt").read_text() == "mine\n"
    secret = tmp_path / "ssh" / "id_ed25519"
    assert not secret.exists() or secret.read_bytes() == b"KEY\n"
    assert (repo / ".git" / "index").read_bytes() == users_index


async def test_a_lock_a_killed_snapshot_left_does_not_block_the_next(tmp_path: Path) -> None:
    """git's `write-tree` locks the private index (`<key>.index.lock`); SIGKILL leaves the lock
    behind. The next prompt still takes its snapshots and its undo is right."""
    driver, repo = await primed(tmp_path, {"a.txt": "mine\n"})
    index = private_index(tmp_path / "home")
    index.with_name(index.name + ".lock").write_bytes(index.read_bytes())
    assert await undone(driver, lambda: (repo / "a.txt").write_text("model\n")) == []
    assert driver.warnings == [] and (repo / "a.txt").read_text() == "mine\n"


async def test_index_settings_of_the_repository_neither_run_nor_change_the_index(
    tmp_path: Path,
) -> None:
    """The repository asks for index version 4, a split index, many files, an fsmonitor and
    hooks: nothing runs, the private index stays di-code's version 2, undo is right."""
    program, marker = planted(tmp_path)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-index-change", "reference-transaction"):
        (hooks / hook).write_text(Path(program).read_text())
        (hooks / hook).chmod(0o755)
    repo = new_repo(tmp_path / "repo", {"a.txt": "mine\n", "b.txt": "b\n"})
    settings = {
        "index.version": "4",
        "core.splitIndex": "true",
        "feature.manyFiles": "true",
        "core.untrackedCache": "true",
        "core.fsmonitor": program,
        "core.hooksPath": str(hooks),
    }
    for key, value in settings.items():
        git(repo, "config", key, value)
    aged(repo)
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: None)
    assert await undone(driver, lambda: (repo / "a.txt").write_text("model\n")) == []
    assert (repo / "a.txt").read_text() == "mine\n" and not marker.exists()
    index = private_index(tmp_path / "home")
    assert index.read_bytes()[:8] == b"DIRC\0\0\0\2"
    assert not list(index.parent.glob("sharedindex.*"))


def test_an_index_git_cannot_compare_is_not_taken_for_unchanged(tmp_path: Path) -> None:
    """The private index comes back with an extension git refuses (a newer git's, or anyone's
    who can write di-code's home): `git diff-files` fails, so no entry of it is known to match
    its file, and a changed file is hashed again rather than taken with its old blob."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "mine\n"})
    aged(repo)
    cache = StatCache(tmp_path / "cache" / "repo.json")
    GitSnapshots(repo, stat_cache=cache).take()
    body = cache.index.read_bytes()[:-20]
    (repo / "a.txt").write_text("user\n")
    body += b"zzzz\0\0\0\0"  # an extension whose lower-case name says git must understand it
    cache.index.write_bytes(body + hashlib.sha1(body).digest())
    tree = GitSnapshots(repo, stat_cache=StatCache(cache.file)).take().tree
    assert git(repo, "cat-file", "-p", f"{tree}:a.txt") == "user\n"


SNAPSHOTTER = """
import os, sys
from pathlib import Path
from di_code.session.git_snapshot import GitSnapshots
from di_code.session.stat_cache import StatCache
repo, cache, mine, rounds = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
for turn in range(rounds):
    text = f"{mine}-{turn:04d}\\n"  # the same size each time, the mtime put back
    (repo / mine).write_text(text)
    os.utime(repo / mine, (1_700_000_000, 1_700_000_000))
    stat_cache = StatCache(cache)
    snapshots = GitSnapshots(repo, stat_cache=stat_cache)
    tree = snapshots.take().tree
    stat_cache.save()
    got = snapshots.git(["cat-file", "-p", f"{tree}:{mine}"]).decode()
    print("ok" if got == text else f"wrong {got!r} for {text!r}", flush=True)
"""


def snapshotter(repo: Path, cache: Path, mine: str, rounds: int) -> subprocess.Popen[str]:
    """Another di-code process taking `rounds` snapshots of `repo` with the same private
    index, rewriting its file `mine` before each; it prints "ok" for each right one."""
    args = [sys.executable, "-c", SNAPSHOTTER, str(repo), str(cache), mine, str(rounds)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, text=True)


def git_tree(repo: Path, tmp_path: Path) -> str:
    """The tree git itself makes of the work tree (with an index of its own)."""
    env = {"GIT_INDEX_FILE": str(tmp_path / "git-index")}
    git(repo, "add", "-A", env=env)
    return git(repo, "write-tree", env=env).strip()


def test_two_processes_snapshotting_one_repository_each_get_the_truth(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", {"one": "one-0000\n", "two": "two-0000\n"})
    cache = tmp_path / "cache" / "repo.json"
    workers = [snapshotter(repo, cache, name, 25) for name in ("one", "two")]
    outputs = [worker.communicate(timeout=600)[0].split() for worker in workers]
    assert outputs == [["ok"] * 25] * 2
    tree = GitSnapshots(repo, stat_cache=StatCache(cache)).take().tree
    assert tree == git_tree(repo, tmp_path)


def test_a_snapshot_killed_midway_leaves_nothing_that_spoils_the_next(tmp_path: Path) -> None:
    """SIGKILL while a process snapshots (its git killed with it, a lock and a staged index
    maybe left): the next snapshot with the same private index is the work tree's."""
    files = {f"f{n:03d}.txt": f"{n}\n" * 2000 for n in range(300)}
    repo = new_repo(tmp_path / "repo", files)
    cache = tmp_path / "cache" / "repo.json"
    worker = snapshotter(repo, cache, "f000.txt", 10_000)
    assert worker.stdout is not None
    for _ in range(3):
        assert worker.stdout.readline() == "ok\n"
    worker.kill()
    worker.wait()
    (repo / "f001.txt").write_text("changed\n")
    tree = GitSnapshots(repo, stat_cache=StatCache(cache)).take().tree
    assert tree == git_tree(repo, tmp_path)


@pytest.mark.parametrize("kind", ["link-outside", "file"])
async def test_a_folder_replaced_by_a_link_or_a_file_is_restored_inside(
    tmp_path: Path, kind: str
) -> None:
    """A tool swaps the folder `d` (whose `d/x` the private index holds with real stat data)
    for a link to a folder outside with its own `x`, or for a file: undo restores `d/x` in
    the work tree and writes nothing outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x").write_text("theirs\n")
    driver, repo = await primed(tmp_path, {"d/x": "mine\n", "a.txt": "a\n"})

    def tool() -> None:
        (repo / "d" / "x").unlink()
        (repo / "d").rmdir()
        if kind == "file":
            (repo / "d").write_text("a file now\n")
        else:
            (repo / "d").symlink_to(outside)

    assert await undone(driver, tool) == []
    assert not (repo / "d").is_symlink() and (repo / "d" / "x").read_text() == "mine\n"
    assert (outside / "x").read_text() == "theirs\n"


async def test_a_repository_made_anew_under_unchanged_files_is_snapshot_right(
    tmp_path: Path,
) -> None:
    """The user deletes `.git` and runs `git init` again: the files and their stat data are
    as the private index has them, but the repository holds none of its blobs."""
    driver, repo = await primed(tmp_path, {"a.txt": "mine\n", "b.txt": "b\n"})
    shutil.rmtree(repo / ".git")
    git(repo, "init", "-q", "-b", "main")
    assert await undone(driver, lambda: (repo / "a.txt").write_text("model\n")) == []
    assert (repo / "a.txt").read_text() == "mine\n" and driver.warnings == []


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
async def test_every_padding_of_an_entry_is_patched_in_place_right(
    tmp_path: Path, object_format: str
) -> None:
    """Names of 1 to 17 bytes give each entry every length of NUL padding (1 to 8), in a
    repository of either object format: the entries changed in the second prompt are patched
    in place, and undo gives each file back its own bytes."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", f"--object-format={object_format}")
    files = {"n" * length: f"{length}\n" for length in range(1, 18)}
    for name, text in files.items():
        (repo / name).write_text(text)
    aged(repo)
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: None)
    changes = [lambda n=name: (repo / n).write_text("model\n") for name in list(files)[::3]]
    assert await undone(driver, *changes) == []
    assert {name: (repo / name).read_text() for name in files} == files


async def test_a_nested_repository_is_named_never_indexed_nor_touched(tmp_path: Path) -> None:
    """An untracked folder with a `.git` of its own: its files never enter the private
    index, a tool's change in it is named as not covered and kept, the rest is undone."""
    driver, repo = await primed(tmp_path, {"a.txt": "mine\n"})
    nested = new_repo(repo / "vendor", {"lib.txt": "lib\n"})
    await driver.prompt(lambda: None)
    assert b"vendor" not in private_index(tmp_path / "home").read_bytes()

    def tool() -> None:
        (repo / "a.txt").write_text("model\n")
        (nested / "lib.txt").write_text("model\n")

    await driver.prompt(tool)
    undo_plan, result = driver.undo()
    assert result.failed == [] and undo_plan.uncovered == ["vendor"]
    assert (repo / "a.txt").read_text() == "mine\n"
    assert (nested / "lib.txt").read_text() == "model\n"


ONE_SNAPSHOT = """
import sys
from pathlib import Path
from di_code.session.git_snapshot import GitSnapshots
from di_code.session.stat_cache import StatCache
stat_cache = StatCache(Path(sys.argv[2]))
GitSnapshots(Path(sys.argv[1]), stat_cache=stat_cache).take()
stat_cache.save()
"""


class Overtaken(GitSnapshots):
    """A run that another run overtakes: right after this one's `write-tree`, the file
    changes again and the other run snapshots it, replacing the private index."""

    def git(self, args: list[str], *, index_file: str | None = None, stdin: bytes = b"") -> bytes:
        out = super().git(args, index_file=index_file, stdin=stdin)
        if args[0] == "write-tree":
            (self.top / "a.txt").write_text("three\n")
            aged(self.top)
            cache = str(self.stat_cache.file)
            subprocess.run([sys.executable, "-c", ONE_SNAPSHOT, str(self.top), cache], check=True)
        return out


def test_a_run_overtaken_by_another_never_pairs_its_tree_with_the_others_index(
    tmp_path: Path,
) -> None:
    """What a run remembers is its tree and the index it wrote that tree from, never the
    index another run put in its place meanwhile (git would then see no change since, and the
    older tree would be taken for the work tree)."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "one\n"})
    aged(repo)
    cache = tmp_path / "cache" / "repo.json"
    StatCache(cache).save()
    GitSnapshots(repo, stat_cache=StatCache(cache)).take()
    (repo / "a.txt").write_text("two\n")
    aged(repo)
    overtaken = StatCache(cache)
    Overtaken(repo, stat_cache=overtaken).take()
    overtaken.save()
    tree = GitSnapshots(repo, stat_cache=StatCache(cache)).take().tree
    assert git(repo, "cat-file", "-p", f"{tree}:a.txt") == "three\n"
