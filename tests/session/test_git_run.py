"""The git runner's own promises (di_code.session.git_run), on real git: the author it is
given, a filter it cannot turn off refused, a case-telling file system told, a shared clone,
a git that cannot start, and a git that does not end (stopped by its caller, blocked on a
FIFO or a pipe, past its time) ended with all it started, each a one-line GitError."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from di_code.session.git_run import (
    Blocked,
    GitError,
    GitStopped,
    clone,
    found_top,
    run_git,
    top_and_refs,
    work_tree_top,
)
from tests.support.processes import processes_running, wait_until


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    return done.stdout.decode()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    return work


def test_a_commit_carries_the_author_it_is_given_as_author_and_committer(repo: Path) -> None:
    (repo / "a.txt").write_text("a\n")
    run_git(repo, ["add", "a.txt"])
    run_git(repo, ["commit", "-q", "-m", "one"], author=("di-code", "di-code@localhost"))
    shown = git(repo, "log", "-1", "--format=%an <%ae> / %cn <%ce>")
    assert shown == "di-code <di-code@localhost> / di-code <di-code@localhost>\n"


def test_a_planted_filter_never_runs_when_git_compares_content(repo: Path) -> None:
    """`status` may read a work-tree file through its clean filter: every driver the
    repository's config names is emptied on the command line first."""
    marker = repo.parent / "ran"
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    with (repo / ".git/config").open("a") as config:
        config.write(f'[filter "lfs"]\n\tclean = touch {marker}\n\tprocess = touch {marker}\n')
    (repo / ".gitattributes").write_text("* filter=lfs\n")
    os.utime(repo / "a.txt", (0, 0))  # stat changed, size not: git reads the content
    assert b"a.txt" not in run_git(repo, ["status", "--porcelain", "-z"]).split(b"\0")
    run_git(repo, ["diff", "--quiet"])
    assert not marker.exists()


def test_a_filter_whose_name_cannot_be_turned_off_is_refused_and_runs_nothing(
    repo: Path,
) -> None:
    marker = repo.parent / "ran"
    (repo / ".git/config").write_text(
        f'[filter "x=y"]\n\tclean = touch {marker}\n', encoding="utf-8"
    )
    (repo / ".gitattributes").write_text("* filter=x=y\n")
    (repo / "a.txt").write_text("a\n")
    with pytest.raises(GitError) as raised:
        run_git(repo, ["status", "--porcelain"])
    assert str(raised.value) == "the repository names a filter that cannot be turned off"
    assert not marker.exists()


@pytest.mark.parametrize("upper", ["none", "a link"])
def test_a_work_tree_on_a_case_telling_file_system_ignores_a_copied_ignorecase(
    repo: Path, upper: str
) -> None:
    """`.GIT` here is missing, or another entry than `.git` (a link to it, not the same
    inode): the file system tells case apart, so `core.ignoreCase = true` from a Mac does not
    hide `Data.csv` behind a tracked `data.csv`."""
    (repo / "data.csv").write_text("tracked\n")
    git(repo, "add", "data.csv")
    git(repo, "config", "core.ignoreCase", "true")
    if upper == "a link":
        (repo / ".GIT").symlink_to(".git")
    (repo / "Data.csv").write_text("untracked\n")
    listed = run_git(repo, ["ls-files", "-z", "--others", "--exclude-standard"]).split(b"\0")
    assert b"Data.csv" in listed


def test_a_work_tree_on_a_case_blind_file_system_keeps_its_ignorecase(
    repo: Path, tmp_path: Path
) -> None:
    """Where `.GIT` is `.git` itself (here a linked work tree's `.git` file, hard-linked as
    `.GIT`: what a case-blind file system shows), git's own `core.ignoreCase` stands."""
    (repo / "data.csv").write_text("tracked\n")
    git(repo, "add", "data.csv")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    git(repo, "config", "core.ignoreCase", "true")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked))
    os.link(linked / ".git", linked / ".GIT")
    (linked / "Data.csv").write_text("untracked\n")
    listed = run_git(linked, ["ls-files", "-z", "--others", "--exclude-standard"]).split(b"\0")
    assert b"Data.csv" not in listed


def test_below_a_work_tree_s_top_the_repository_s_own_case_setting_stands(repo: Path) -> None:
    """The file system is asked only at a work tree's top (`.GIT` beside `.git`): from a
    folder below it, git keeps the repository's `core.ignoreCase`."""
    (repo / "sub").mkdir()
    (repo / "sub/data.csv").write_text("tracked\n")
    git(repo, "add", "sub/data.csv")
    git(repo, "config", "core.ignoreCase", "true")
    (repo / "sub/Data.csv").write_text("untracked\n")
    listed = run_git(repo / "sub", ["ls-files", "-z", "--others", "--exclude-standard"])
    assert listed == b""


def test_a_shared_clone_borrows_the_objects_and_checks_nothing_out(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    copy = tmp_path / "copy"
    clone(str(repo), copy, shared=True)
    borrowed = (copy / ".git/objects/info/alternates").read_text()
    assert borrowed == f"{repo / '.git/objects'}\n"
    assert sorted(p.name for p in copy.iterdir()) == [".git"]
    own = tmp_path / "own"
    clone(str(repo), own)  # not shared unless asked: the objects are copied, nothing borrowed
    assert not (own / ".git/objects/info/alternates").exists()
    assert git(own, "cat-file", "-t", "HEAD:a.txt").strip() == "blob"


def test_a_clone_of_what_is_neither_a_path_nor_a_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(GitError) as raised:
        clone("relative/repo", tmp_path / "copy")
    assert str(raised.value) == "'relative/repo' is neither an absolute path nor a git URL"
    assert not (tmp_path / "copy").exists()


def test_a_git_that_cannot_start_is_one_line(
    repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    with pytest.raises(GitError) as raised:
        run_git(repo, ["status"])
    assert str(raised.value).startswith("git status failed: [Errno 2] No such file")
    assert "\n" not in str(raised.value)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A git:// server on 127.0.0.1 that accepts and never answers."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


def test_a_clone_its_caller_stops_is_ended_with_all_it_started(
    silent_server: int, tmp_path: Path
) -> None:
    url = f"git://127.0.0.1:{silent_server}/never-{tmp_path.name}"
    asked: list[bool] = []

    def stopped() -> bool:
        asked.append(True)
        return len(asked) > 2  # git runs (and waits on the server) when the caller stops it

    with pytest.raises(GitStopped) as raised:
        clone(url, tmp_path / "copy", stopped=stopped)
    assert str(raised.value) == "git clone was stopped"
    assert processes_running(url) == []  # git and its transport helper are gone


def test_a_git_blocked_opening_a_fifo_is_killed(repo: Path) -> None:
    os.mkfifo(repo / ".gitignore")
    with pytest.raises(Blocked) as raised:
        run_git(repo, ["ls-files", "-z", "--others", "--exclude-standard"])
    assert str(raised.value) == "git ls-files was blocked opening a FIFO"


def test_a_git_past_its_time_is_killed(repo: Path) -> None:
    """A git reading a pipe nobody writes (not a FIFO being opened): the time bound ends it."""
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(read_end, "rb") as feed, pytest.raises(Blocked) as raised:
            run_git(repo, ["hash-object", "--stdin"], stdin=feed, timeout=0.5)
    finally:
        os.close(write_end)
    assert str(raised.value) == "git hash-object did not end within 0.5 s"
    wait_until(lambda: processes_running("hash-object --stdin", under=repo) == [], "git to end")


def test_a_git_its_caller_stops_is_ended_at_once(repo: Path) -> None:
    """A snapshot's git is stopped with the prompt: `stopped` reaches every call, not only a
    clone's (a git reading a pipe nobody writes would otherwise run out its time bound)."""
    read_end, write_end = os.pipe()
    asked: list[bool] = []

    def stopped() -> bool:
        asked.append(True)
        return len(asked) > 2  # git runs (and waits on the pipe) when the caller stops it

    try:
        with os.fdopen(read_end, "rb") as feed, pytest.raises(GitStopped):
            run_git(repo, ["hash-object", "--stdin"], stdin=feed, timeout=30, stopped=stopped)
    finally:
        os.close(write_end)
    wait_until(lambda: processes_running("hash-object --stdin", under=repo) == [], "git to end")


@pytest.fixture
def slow_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `git` first on PATH that takes 5 s before it runs git."""
    slow = tmp_path / "slow"
    slow.mkdir()
    real = subprocess.run(["which", "git"], capture_output=True, text=True, check=True).stdout
    (slow / "git").write_text(f'#!/bin/sh\nsleep 5\nexec {real.strip()} "$@"\n')
    (slow / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{slow}:{os.environ['PATH']}")


@pytest.mark.usefixtures("slow_git")
def test_the_work_tree_top_is_asked_within_the_callers_time(repo: Path) -> None:
    """The system prompt gives git 5 s to say where the work tree is: a git that takes longer
    is ended then, not at the runner's own bound of minutes."""
    with pytest.raises(Blocked) as raised:
        found_top(repo, timeout=0.5)
    assert str(raised.value) == "git rev-parse did not end within 0.5 s"


@pytest.mark.usefixtures("slow_git")
def test_a_git_fed_its_input_is_stopped_too(repo: Path) -> None:
    """A snapshot feeds git its blobs (fast-import): the stop reaches that git as well."""
    asked: list[bool] = []

    def stopped() -> bool:
        asked.append(True)
        return len(asked) > 2

    with pytest.raises(GitStopped):
        run_git(repo, ["hash-object", "--stdin"], stdin=b"blob\n", stopped=stopped)


def test_the_work_tree_top_is_found_from_below_and_none_outside(repo: Path, tmp_path: Path) -> None:
    (repo / "sub").mkdir()
    assert work_tree_top(repo / "sub") == repo
    (tmp_path / "plain").mkdir()
    assert work_tree_top(tmp_path / "plain") is None


def test_the_top_and_one_homes_refs_come_from_one_git_whatever_the_names(tmp_path: Path) -> None:
    """A top whose name holds a newline and a line an object name could be, a trailing space;
    refs of two sessions of this home and one of another home: each ref with its object."""
    work = tmp_path / f"work\n{'a' * 40}\nrefs "
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / "a.txt").write_text("a\n")
    git(work, "add", "a.txt")
    tree = git(work, "write-tree").strip()
    mine = [f"refs/di-code/home/{session}/{tree}" for session in ("s1", "s2")]
    for ref in [*mine, f"refs/di-code/other/s1/{tree}"]:
        git(work, "update-ref", ref, tree)
    (work / "sub").mkdir()
    assert top_and_refs(work / "sub", "refs/di-code/home/") == (work, dict.fromkeys(mine, tree))
    assert top_and_refs(work, "refs/di-code/none/") == (work, {})
    assert top_and_refs(work) == (work, None)  # none asked for


def test_a_ref_not_named_after_its_object_leaves_the_refs_unknown(repo: Path) -> None:
    """A ref named after one tree that points at another object (a command wrote it): the
    names are not taken for their objects, the caller lists the refs itself."""
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    tree = git(repo, "write-tree").strip()
    git(repo, "update-ref", f"refs/di-code/home/s1/{tree}", tree)
    git(repo, "update-ref", f"refs/di-code/home/s2/{'b' * 40}", tree)
    assert top_and_refs(repo, "refs/di-code/home/") == (repo, None)
