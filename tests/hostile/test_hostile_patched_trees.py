"""The tree of a snapshot after a change, which the `git fast-import` writing the changed blobs
builds on the last snapshot's tree (README, Undo: "Inside a git work tree a record is a
snapshot ..."), attacked with HOSTILE.md's classes: names fast-import must be given quoted,
links and modes, case twins under a Mac's config, a name past PATH_MAX; a repository whose
config, hooks, alternates and refs try to change what fast-import does; a fast-import that
fails (a full object store, a last tree missing a folder) or is stopped; two processes of one
home at once; and undo after prompts that change, touch and revert.

Each snapshot must be the tree a snapshot with no private index makes (every file hashed anew),
leave the repository's refs as they were and no `fast_import_crash_*` report in its `.git`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from di_code.session.git_run import GitError
from tests.cli.conftest import cli_env
from tests.support.disks import fill, tiny_disk
from tests.support.git import aged, git, logging_git, past_this_second, subcommands
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.processes import processes_running, wait_until
from tests.support.snapshot_runs import (
    STOP_BOUND,
    TRACEBACK,
    contents,
    di_code,
    repository,
    snapshot,
    stalled,
    start,
    stop,
    undone_exactly,
)
from tests.support.undo_driver import Driver, new_repo

HOUR_AGO = 1_700_000_000


def logged_snapshot(
    repo: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, list[str]]:
    """`snapshot`, and the git subcommands it ran."""
    folder = Path(tempfile.mkdtemp(dir=cache.parent))
    log = folder / "git.log"
    with monkeypatch.context() as patch:
        patch.setenv("PATH", f"{logging_git(folder / 'bin', log)}:{os.environ['PATH']}")
        tree = snapshot(repo, cache)
    return tree, subcommands(log)


def built_on_last(repo: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """`snapshot`, which must be the one built on the last tree (no `write-tree`): the path
    under attack, not the one that makes the tree again from the private index."""
    tree, ran = logged_snapshot(repo, cache, monkeypatch)
    assert "fast-import" in ran and "write-tree" not in ran, ran
    return tree


def snapshot_writing_nothing(repo: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """`snapshot` of files git names whose bytes and mode are as they were: no fast-import."""
    tree, ran = logged_snapshot(repo, cache, monkeypatch)
    assert "diff-files" in ran and not {"fast-import", "write-tree"} & set(ran), ran
    return tree


def fresh(repo: Path, folder: Path) -> str:
    """The tree a snapshot with no private index makes (every file hashed anew)."""
    return snapshot(repo, folder / "cache.json")


def crash_reports(repo: Path) -> list[str]:
    return sorted(path.name for path in (repo / ".git").glob("fast_import_crash_*"))


def write_raw(repo: Path, name: bytes, data: bytes) -> None:
    path = os.path.join(os.fsencode(repo), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def blob(repo: Path, tree: str, name: str) -> str:
    return git(repo, "cat-file", "-p", f"{tree}:{name}")


# 1. Names and paths ---------------------------------------------------------------------------

QUOTE_BAIT = [
    b"new\nline.txt",
    b"tab\there.txt",
    b'"starts-quoted.txt',
    b'ends-quoted"',
    b"ends-backslash\\",
    b"octal\\101-looking",  # read unquoted, `\101` would be `A`
    b"del\x7fbyte",
    b"cr-at-end\r",
    b"M/100644/f.txt",  # folders named as fast-import's commands and modes
    b"ls/done/commit refs/heads/main",
    b"040000 tree/data 0",
    b"\xff\xfe-folder/not utf-8\x80.txt",
]


def test_changed_names_fast_import_must_have_quoted_make_the_tree_hashing_all_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round after round a different few of these change (same paths, so the tree is built on
    the last one): a newline, a tab, a quote at either end, a trailing backslash, a backslash
    before digits, DEL, a trailing CR, folders named as fast-import's commands, bytes not
    UTF-8. Then all are touched, their bytes kept: no git writes anything."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n"})
    for number, name in enumerate(QUOTE_BAIT):
        write_raw(repo, name, b"%d\n" % number)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "names")
    aged(repo)
    cache = tmp_path / "cache" / "repo.json"
    trees = [snapshot(repo, cache)]
    for start_at in range(0, len(QUOTE_BAIT), 3):
        for name in QUOTE_BAIT[start_at : start_at + 3]:
            write_raw(repo, name, b"round %d of %r\n" % (start_at, name))
        aged(repo)
        trees.append(built_on_last(repo, cache, monkeypatch))
        assert trees[-1] == fresh(repo, tmp_path / f"fresh{start_at}"), QUOTE_BAIT[start_at]
    assert len(set(trees)) == len(trees)
    assert not crash_reports(repo)
    for name in QUOTE_BAIT:  # touched, bytes as they were: no git writes anything
        os.utime(os.path.join(os.fsencode(repo), name))
    past_this_second()
    assert snapshot_writing_nothing(repo, cache, monkeypatch) == trees[-1]


REFUSED_OR_SORTED = [".GIT/config", "GIT~1/x", "sub/.Git/hooks/pre-commit", "a.b", "a-b", "a0"]
"""Names git's own index refuses (a `.git` of another case, an NTFS short name), and files
beside a folder `a` that git sorts as `a/`."""


def test_names_gits_index_refuses_and_folders_sorted_as_slashed_make_the_fresh_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Untracked `.GIT/config`, `GIT~1/x` and a `.gitmodules` that is a link, and the files
    `a.b`, `a-b`, `a0` beside a folder `a`: changed (in `a/` too), each snapshot built on the
    last tree is the fresh one, and holds them all."""
    repo = new_repo(tmp_path / "repo", {"a/in.txt": "in\n", "top.txt": "t\n"})
    for name in REFUSED_OR_SORTED:
        write_raw(repo, name.encode(), b"one\n")
    (repo / ".gitmodules").symlink_to("top.txt")
    aged(repo)
    cache = tmp_path / "cache" / "repo.json"
    snapshot(repo, cache)
    for name in [*REFUSED_OR_SORTED, "a/in.txt"]:
        write_raw(repo, name.encode(), b"two\n")
    aged(repo)
    changed = built_on_last(repo, cache, monkeypatch)
    assert changed == fresh(repo, tmp_path / "fresh")
    listed = git(repo, "ls-tree", "-r", "-z", "--name-only", changed).split("\0")
    assert set(REFUSED_OR_SORTED) | {".gitmodules", "a/in.txt"} <= set(listed)


async def test_undo_of_a_prompt_that_changed_every_such_name_is_byte_exact(
    tmp_path: Path,
) -> None:
    """The prompt's tools rewrite each of those names (every snapshot of it built on the
    last tree): undo gives each its own bytes back."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n"})
    for number, name in enumerate(QUOTE_BAIT):
        write_raw(repo, name, b"%d\n" % number)
    aged(repo)
    before = contents(repo)
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: None)
    tools = [lambda n=name: write_raw(repo, n, b"model wrote %r\n" % n) for name in QUOTE_BAIT]
    await driver.prompt(*tools)
    assert contents(repo) != before
    _, result = driver.undo()
    assert result.failed == []
    assert contents(repo) == before


def test_case_twins_under_a_macs_ignorecase_keep_each_its_own_blob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`core.ignoreCase = true` copied from a Mac, on a file system that tells case apart: a
    change to `README.md` is put at that name, never in its twin `readme.md`."""
    repo = new_repo(tmp_path / "repo", {"README.md": "upper\n", "readme.md": "lower\n"})
    git(repo, "config", "core.ignoreCase", "true")
    aged(repo)
    cache = tmp_path / "cache" / "repo.json"
    snapshot(repo, cache)
    (repo / "README.md").write_text("upper, changed\n")
    aged(repo)
    changed = built_on_last(repo, cache, monkeypatch)
    assert blob(repo, changed, "README.md") == "upper, changed\n"
    assert blob(repo, changed, "readme.md") == "lower\n"
    assert changed == fresh(repo, tmp_path / "fresh")


def test_a_file_made_a_link_of_its_own_bytes_and_back_and_a_bare_mode_flip_are_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blob stays while the kind changes: a file replaced by a link whose target is the
    file's bytes (a newline in it), then the file again; the executable bit flipped alone.
    Each snapshot, built on the last tree, is the fresh one."""
    target = "line\nbreak"
    repo = new_repo(tmp_path / "repo", {"a": target, "run.sh": "echo\n", "b.txt": "b\n"})
    aged(repo)
    cache = tmp_path / "cache" / "repo.json"
    snapshot(repo, cache)

    def to_link() -> None:
        (repo / "a").unlink()
        (repo / "a").symlink_to(target)

    def to_file() -> None:
        (repo / "a").unlink()
        (repo / "a").write_text(target)

    rounds = [to_link, to_file, lambda: (repo / "run.sh").chmod(0o755)]
    for number, change in enumerate(rounds):
        change()
        aged(repo)
        built = built_on_last(repo, cache, monkeypatch)
        assert built == fresh(repo, tmp_path / f"fresh{number}"), number
    assert "120000" not in git(repo, "ls-tree", snapshot(repo, cache), "a")


async def test_undo_gives_back_a_file_a_prompt_made_a_link_and_a_bit_it_flipped(
    tmp_path: Path,
) -> None:
    """The prompt makes `a` a link to its own bytes (a newline in the target) and flips
    `run.sh`'s executable bit: undo gives back the file, its bytes and the mode."""
    target = "line\nbreak"
    repo = new_repo(tmp_path / "repo", {"a": target, "run.sh": "echo\n"})
    aged(repo)
    driver = Driver(tmp_path / "home", repo)
    await driver.prompt(lambda: None)

    def tool() -> None:
        (repo / "a").unlink()
        (repo / "a").symlink_to(target)
        (repo / "run.sh").chmod(0o755)

    await driver.prompt(tool)
    assert (repo / "a").is_symlink()
    _, result = driver.undo()
    assert result.failed == []
    assert not (repo / "a").is_symlink()
    assert (repo / "a").read_text() == target
    assert (repo / "run.sh").stat().st_mode & 0o777 == 0o644


@pytest.mark.xfail(
    strict=True,
    reason="git cannot lstat a path past PATH_MAX: diff-files skips it (exit 0), so the "
    "private index keeps its old blob and the snapshot is not the files as they are",
)
def test_a_tracked_file_deeper_than_path_max_changed_is_in_the_next_snapshot(
    tmp_path: Path,
) -> None:
    """A tracked file 4,427 bytes deep (reached folder by folder): the first snapshot reads
    it; after it changes, the next snapshot must hold the new bytes, as a fresh one does."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n"})
    parts = ["d" * 200] * 22
    folder = os.open(repo, os.O_RDONLY)
    for part in parts:
        os.mkdir(part, dir_fd=folder)
        deeper = os.open(part, os.O_RDONLY, dir_fd=folder)
        os.close(folder)
        folder = deeper

    def write(data: bytes) -> None:
        handle = os.open("f.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=folder)
        os.write(handle, data)
        os.close(handle)

    try:
        write(b"one\n")
        name = "/".join([*parts, "f.txt"])
        one = subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=repo, input=b"one\n",
            capture_output=True, check=True,
        ).stdout.decode().strip()  # fmt: skip
        git(repo, "update-index", "--add", "--cacheinfo", f"100644,{one},{name}")
        aged(repo)
        cache = tmp_path / "cache" / "repo.json"
        snapshot(repo, cache)
        write(b"two, changed\n")
        os.utime("f.txt", (HOUR_AGO, HOUR_AGO), dir_fd=folder)
        past_this_second()
        assert snapshot(repo, cache) == fresh(repo, tmp_path / "fresh")
    finally:
        os.close(folder)


def test_over_a_hundred_changed_files_some_to_bytes_git_holds_in_sha256_make_the_fresh_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sha256 repository; 150 files of 300 in nested folders change (more than git's
    unpack limit, so only the blobs git lacks go in), half of them to bytes another file
    already has: the tree built on the last is the fresh one."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "--object-format=sha256", "-b", "main")
    names = [f"{top}/{mid}/f{n}.txt" for top in "pqr" for mid in "xyzw" for n in range(25)]
    for number, name in enumerate(names):
        write_raw(repo, name.encode(), b"%d\n" % number)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "many")
    aged(repo)
    cache = tmp_path / "cache" / "repo.json"
    snapshot(repo, cache)
    for number, name in enumerate(names[::2]):
        data = b"%d\n" % (number + 1) if number % 2 else b"new %d\n" % number
        write_raw(repo, name.encode(), data)
    aged(repo)
    changed = built_on_last(repo, cache, monkeypatch)
    assert len(changed) == 64
    assert changed == fresh(repo, tmp_path / "fresh")
    assert not crash_reports(repo)


# 2. Programs and refs a repository names ------------------------------------------------------

HOOKS = ("reference-transaction", "post-index-change", "post-commit", "pre-auto-gc", "post-rewrite")


def test_a_config_that_makes_fast_import_unpack_share_or_borrow_runs_nothing_and_is_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`fastimport.unpackLimit` and `transfer.unpackLimit` high (fast-import then runs
    `unpack-objects`), `core.sharedRepository`, objects borrowed through
    `objects/info/alternates`, an fsmonitor and every hook a marker: the tree after a change
    is the fresh one, no program ran, and the refs are as they were."""
    other = new_repo(tmp_path / "other", {"a.txt": "a\n", "d/b.txt": "borrowed\n"})
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "d/b.txt": "b\n", "d/c.txt": "c\n"})
    alternates = repo / ".git/objects/info/alternates"
    alternates.write_text(f"{other}/.git/objects\n")
    marker = tmp_path / "ran"
    program = tmp_path / "program"
    program.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\n')
    program.chmod(0o755)
    for hook in HOOKS:
        (repo / ".git/hooks" / hook).symlink_to(program)
    for key, value in [
        ("fastimport.unpackLimit", "100000"),
        ("transfer.unpackLimit", "100000"),
        ("core.sharedRepository", "group"),
        ("core.fsmonitor", str(program)),
        ("core.hooksPath", str(repo / ".git/hooks")),
    ]:
        git(repo, "config", key, value)
    aged(repo)
    refs = git(repo, "for-each-ref")
    cache = tmp_path / "cache" / "repo.json"
    snapshot(repo, cache)
    (repo / "d/b.txt").write_text("borrowed\n")  # a blob the alternate holds
    (repo / "d/c.txt").write_text("new bytes\n")
    aged(repo)
    changed = built_on_last(repo, cache, monkeypatch)
    assert changed == fresh(repo, tmp_path / "fresh")
    assert blob(repo, changed, "d/c.txt") == "new bytes\n"
    assert not marker.exists(), marker.read_text()
    assert git(repo, "for-each-ref") == refs
    assert not crash_reports(repo)


UNPARSABLE = [
    ("fastimport.unpackLimit", "many"),
    ("transfer.unpackLimit", "many"),
    ("pack.indexVersion", "9"),
    ("pack.depth", "deep"),
]
"""Settings only a pack writer reads: the user's own git (status, diff, commit) works on."""


@pytest.mark.parametrize(("key", "value"), UNPARSABLE, ids=[key for key, _ in UNPARSABLE])
def test_a_setting_only_fast_import_reads_set_unparsable_never_fails_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, value: str
) -> None:
    """A model's `git config fastimport.unpackLimit many` (or another setting git parses only
    when it writes a pack) leaves the user's git working; di-code's snapshot after a change
    must still be made, or undo could never take back what the tools change next."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "d/b.txt": "b\n"})
    aged(repo)
    cache = tmp_path / "cache" / "repo.json"
    snapshot(repo, cache)
    git(repo, "config", key, value)
    git(repo, "status")
    (repo / "d/b.txt").write_text("changed by a tool\n")
    aged(repo)
    changed = built_on_last(repo, cache, monkeypatch)
    assert blob(repo, changed, "d/b.txt") == "changed by a tool\n"
    assert changed == fresh(repo, tmp_path / "fresh")
    assert not crash_reports(repo)


@pytest.mark.parametrize("kind", ["symbolic", "folder", "packed"])
def test_a_scratch_ref_the_repository_already_holds_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """`refs/di-code/tree-edit` as a symbolic ref to `main` (written through, it would move
    the user's branch), as a folder of refs, or packed: every ref stays as it was."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "d/b.txt": "b\n"})
    head = git(repo, "rev-parse", "HEAD").strip()
    if kind == "symbolic":
        git(repo, "symbolic-ref", "refs/di-code/tree-edit", "refs/heads/main")
    elif kind == "folder":
        git(repo, "update-ref", "refs/di-code/tree-edit/inside", head)
    else:
        git(repo, "update-ref", "refs/di-code/tree-edit", head)
        git(repo, "pack-refs", "--all")
    aged(repo)
    refs = git(repo, "for-each-ref")
    cache = tmp_path / "cache" / "repo.json"
    snapshot(repo, cache)
    (repo / "d/b.txt").write_text("changed\n")
    aged(repo)
    changed = built_on_last(repo, cache, monkeypatch)
    assert blob(repo, changed, "d/b.txt") == "changed\n"
    assert changed == fresh(repo, tmp_path / "fresh")
    assert git(repo, "for-each-ref") == refs
    assert git(repo, "rev-parse", "main").strip() == head
    assert not crash_reports(repo)


# 3. A fast-import that fails or is stopped ----------------------------------------------------


def test_a_full_object_store_leaves_no_crash_report_and_the_tree_after_is_right(
    tmp_path: Path,
) -> None:
    """`.git/objects` (a disk of its own) full when a changed file's blob is imported: the
    snapshot fails in one line, and leaves no `fast_import_crash_*` in the user's `.git`
    (each would stay for good); with room again the next snapshot is the fresh tree."""
    repo = tmp_path / "repo"
    repo.mkdir()
    with tiny_disk(repo / ".git" / "objects", "2m") as objects:
        new_repo(repo, {"a.txt": "a\n", "d/b.txt": "b\n"})
        aged(repo)
        cache = tmp_path / "cache" / "repo.json"
        snapshot(repo, cache)
        fill(objects)
        (repo / "d/b.txt").write_bytes(os.urandom(300))
        aged(repo)
        with pytest.raises(GitError) as failed:
            snapshot(repo, cache)
        assert "\n" not in str(failed.value)
        assert not crash_reports(repo)
        (objects / "filler").unlink()
        assert snapshot(repo, cache) == fresh(repo, tmp_path / "fresh")
        assert not crash_reports(repo)


def test_a_last_tree_missing_one_of_its_folders_leaves_no_crash_report(tmp_path: Path) -> None:
    """The last snapshot's tree is there but the tree of a folder in it is not (lost from
    the object store): the snapshot after a change in that folder is the fresh tree, and
    the failed build on the old one leaves no `fast_import_crash_*` in `.git`."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "d/b.txt": "b\n", "d/e/c.txt": "c\n"})
    (repo / "d/untracked.txt").write_text("only in the snapshot's tree\n")
    aged(repo)
    cache = tmp_path / "cache" / "repo.json"
    first = snapshot(repo, cache)
    folder = git(repo, "rev-parse", f"{first}:d").strip()
    (repo / ".git/objects" / folder[:2] / folder[2:]).unlink()
    (repo / "d/b.txt").write_text("changed\n")
    aged(repo)
    assert snapshot(repo, cache) == fresh(repo, tmp_path / "fresh")
    assert not crash_reports(repo)


def test_a_read_only_object_store_fails_the_snapshot_in_one_line_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    """`.git/objects` mounted read-only: the snapshot after a change fails in one line, with
    no crash report and no ref; once writable, the next snapshot is the fresh tree."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "d/b.txt": "b\n"})
    aged(repo)
    cache = tmp_path / "cache" / "repo.json"
    snapshot(repo, cache)
    objects = str(repo / ".git/objects")
    if subprocess.run(["mount", "--bind", objects, objects], capture_output=True).returncode:
        pytest.skip("cannot bind-mount (needs root)")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", objects], check=True)
        refs = git(repo, "for-each-ref")
        (repo / "d/b.txt").write_text("changed\n")
        aged(repo)
        with pytest.raises(GitError) as failed:
            snapshot(repo, cache)
        assert "\n" not in str(failed.value)
        assert git(repo, "for-each-ref") == refs
    finally:
        subprocess.run(["umount", objects], check=False)
    assert not crash_reports(repo)
    assert snapshot(repo, cache) == fresh(repo, tmp_path / "fresh")


@pytest.mark.parametrize(("number", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_while_the_tree_is_built_on_the_last_ends_in_bound_and_loses_nothing(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path,
    number: signal.Signals, code: int,
) -> None:  # fmt: skip
    """The user changed a file's bytes only (the same paths: the prompt's first snapshot is
    built on the last tree); its fast-import writes all, then hangs: SIGTERM or Ctrl-C ends
    di-code within the bound (143, 130), the refs are as they were (no scratch branch), no
    crash report, and the next prompt is recorded and undone exactly."""
    env = cli_env(di_code_home, llm_server)
    repository(workspace)
    aged(workspace)
    llm_server.script(Turn(text="hello"))
    assert di_code(env, workspace, "run", "--yes", "hi").returncode == 0
    (workspace / "a.txt").write_bytes(b"a, the user's\n")
    refs = git(workspace, "for-each-ref")
    running = stalled(
        llm_server, env, workspace, tmp_path, "fast-import", "run", "-c", "--yes", "w"
    )
    err, took = stop(running, number)
    assert running.returncode == code, err
    assert TRACEBACK not in err
    assert took < STOP_BOUND, f"ended {took:.1f} s after {number.name}"
    wait_until(lambda: not processes_running("sleep 30", under=workspace), "no git left")
    assert git(workspace, "for-each-ref") == refs
    assert not crash_reports(workspace)
    undone_exactly(llm_server, env, workspace, "--continue")


# 4. Two processes of one home -----------------------------------------------------------------

WRITER = """
import subprocess, sys
from pathlib import Path
from di_code.session.git_snapshot import GitSnapshots
from di_code.session.stat_cache import StatCache
repo, cache, mine, rounds = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
for n in range(rounds):
    data = f"{mine} round {n}\\n"
    (repo / mine).write_text(data)
    stat_cache = StatCache(cache)
    tree = GitSnapshots(repo, stat_cache=stat_cache).take().tree
    stat_cache.save()
    held = subprocess.run(["git", "cat-file", "-p", f"{tree}:{mine}"], cwd=repo,
                          capture_output=True, text=True).stdout
    if held != data:
        sys.exit(f"round {n}: {mine} held {held!r}, not {data!r}")
"""


@pytest.mark.parametrize("homes", [1, 2], ids=["one home", "two homes"])
def test_two_processes_changing_files_at_once_each_get_their_bytes(
    tmp_path: Path, homes: int
) -> None:
    """Two processes (sharing one private index, or each with its home's) change each its own
    file, a snapshot after each change, at the same time: each snapshot holds the bytes its
    own process just wrote, no crash report, no ref written; then a snapshot is the fresh
    one whichever home takes it."""
    files = {f"d{n}/f{m}.txt": f"{n} {m}\n" for n in range(4) for m in range(5)}
    repo = new_repo(tmp_path / "repo", {**files, "x/mine.txt": "x\n", "y/mine.txt": "y\n"})
    aged(repo)
    caches = [tmp_path / f"home{n % homes}" / "repo.json" for n in range(2)]
    for cache in caches:
        snapshot(repo, cache)
    refs = git(repo, "for-each-ref")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(repo), str(cache), mine, "12"],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for mine, cache in zip(("x/mine.txt", "y/mine.txt"), caches, strict=True)
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
    aged(repo)
    made_fresh = fresh(repo, tmp_path / "fresh")
    assert [snapshot(repo, cache) for cache in caches] == [made_fresh, made_fresh]
    assert git(repo, "for-each-ref") == refs
    assert not crash_reports(repo)


def test_two_di_code_runs_of_one_home_changing_files_at_once_lose_nothing(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """Two `di-code run`s (each its own session and model server, one home) rewrite each its
    own file six times at once (the same paths: each tree is built on the last): both end
    without a checkpoint failure or crash report, each session keeps its refs to trees git
    holds, and the home's shared private index then gives the fresh tree."""
    repository(workspace)
    aged(workspace)
    llm_server.script(Turn(text="hello"))
    env = cli_env(di_code_home, llm_server)
    assert di_code(env, workspace, "run", "--yes", "hi").returncode == 0
    with LLMServer() as other:
        runs = []
        for server, name in ((llm_server, "a.txt"), (other, "b.txt")):
            writes = [call("write", {"path": name, "content": f"{n} {name}\n"}, f"c{n}")
                      for n in range(6)]  # fmt: skip
            server.script(*writes, Turn(text="done"))
            runs.append(start(cli_env(di_code_home, server), workspace, "run", "--yes", "go"))
        for running in runs:
            out, err = running.communicate(timeout=240)
            assert running.returncode == 0, out + err
            assert TRACEBACK not in err and "checkpoint" not in err, err
    assert contents(workspace)[b"a.txt"] == b"5 a.txt\n"
    assert contents(workspace)[b"b.txt"] == b"5 b.txt\n"
    assert not crash_reports(workspace)
    refs = git(workspace, "for-each-ref", "--format=%(objecttype) %(refname)", "refs/di-code/")
    sessions = {line.split("/")[3] for line in refs.splitlines()}
    assert len(sessions) == 3, refs  # the first prompt's, and each run's
    assert {line.split()[0] for line in refs.splitlines()} == {"tree"}, refs
    [cache] = di_code_home.rglob("snapshot-cache/*.json")
    aged(workspace)
    assert snapshot(workspace, cache) == fresh(workspace, di_code_home.parent / "fresh")


# 5. Undo after changes, touches and reverts ---------------------------------------------------


async def test_undo_after_prompts_that_change_touch_and_revert_is_exact_and_a_touch_adds_nothing(
    tmp_path: Path,
) -> None:
    """Prompt 1 changes two files (prompt 2 changes none), prompt 3 only touches them (same
    bytes, new times), prompt 4 reverts one and changes the other again: prompt 3 adds no git
    object; `undo` takes back prompt 4, and `undo --to 1` the bytes from before prompt 1."""
    repo = new_repo(tmp_path / "repo", {"a.txt": "a\n", "d/b.txt": "b\n", "c.txt": "c\n"})
    aged(repo)
    before = contents(repo)
    driver = Driver(tmp_path / "home", repo)
    a, b = repo / "a.txt", repo / "d/b.txt"
    await driver.prompt(lambda: a.write_text("a1\n"), lambda: b.write_text("b1\n"))
    after_first = contents(repo)
    aged(repo)
    await driver.prompt(lambda: None)  # the private index takes the new stat data
    objects = git(repo, "count-objects", "-v")
    past_this_second()
    await driver.prompt(lambda: os.utime(a), lambda: os.utime(b))
    assert git(repo, "count-objects", "-v") == objects
    await driver.prompt(lambda: a.write_text("a\n"), lambda: b.write_text("b3\n"))
    _, result = driver.undo()
    assert result.failed == []
    assert contents(repo) == after_first
    _, result = driver.undo(to=1)
    assert result.failed == []
    assert contents(repo) == before


def test_cli_undo_and_undo_to_after_change_touch_and_revert_prompts_are_exact(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """Through `di-code run`: prompt 1 writes two files, prompt 2's bash only touches them
    (and adds no git object), prompt 3 writes one back to its first bytes and changes the
    other again. `di-code undo --yes` gives back the state after prompt 2, and `undo --to 1`
    the bytes from before prompt 1."""
    env = cli_env(di_code_home, llm_server)
    repository(workspace)
    aged(workspace)
    before = contents(workspace)

    def writes(a: str, b: str) -> list[tuple[str, dict[str, str]]]:
        return [
            ("write", {"path": "a.txt", "content": a}),
            ("write", {"path": "b.txt", "content": b}),
        ]

    prompts = [writes("a1\n", "b1\n"), [("bash", {"command": "touch a.txt b.txt"})]]
    prompts.append(writes("a\n", "b3\n"))
    states, objects = [], []
    for number, calls in enumerate(prompts):
        turns = [call(name, args, f"c{number}{n}") for n, (name, args) in enumerate(calls)]
        llm_server.script(*turns, Turn(text="done"))
        first = () if number == 0 else ("--continue",)
        ran = di_code(env, workspace, "run", *first, "--yes", "--sandbox", "off", f"p{number}")
        assert ran.returncode == 0 and "checkpoint" not in ran.stderr, ran.stderr
        states.append(contents(workspace))
        objects.append(git(workspace, "count-objects", "-v"))
        past_this_second()
    assert objects[1] == objects[0]  # the touch prompt wrote no object
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == states[1]
    back = di_code(env, workspace, "undo", "--to", "1", "--yes")
    assert back.returncode == 0, back.stdout + back.stderr
    assert contents(workspace) == before
    assert not crash_reports(workspace)
