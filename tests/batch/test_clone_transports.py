"""Clones reach only the transports README names (https, ssh, git, file, user@host:path);
any other (`ext::`, `fd::`, a `NAME::` remote helper, http) is refused in one line naming the
repo, by di-code first and by git itself (its `protocol.<name>.allow` settings) too."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from di_code.batch.checkout import CheckoutError, make_checkout
from di_code.session.git_run import ALLOWED, CLONE_CONFIG, GitError, remote_transport, run_git
from tests.batch.conftest import RunBatch, make_repo, write_tasks


def ext_repo(marker: Path) -> str:
    return f"ext::sh -c touch% {marker}% #://x"


@pytest.mark.parametrize(
    ("repo", "transport"),
    [
        ("https://example.com/org/x.git", "https"),
        ("ssh://git@example.com/org/x.git", "ssh"),
        ("git+ssh://example.com/x", "ssh"),
        ("git://example.com/x.git", "git"),
        ("file:///srv/x.git", "file"),
        ("git@example.com:org/x.git", "ssh"),
        ("user.name@host-1.example:x", "ssh"),
        ("../relative/folder", None),
        ("/abs/folder:with:colons", None),
        ("git@example.com:org/x:y", "ssh"),  # the address ends at the first colon
        ("./release@v2:notes", None),  # a folder path with @ and : in it, not an address
        ("plain-folder", None),
    ],
)
def test_the_named_transports_and_paths_are_told_apart(repo: str, transport: str | None) -> None:
    assert remote_transport(repo) == transport


@pytest.mark.parametrize(
    "repo",
    [
        "ext::sh -c touch% /tmp/x% #://x",
        "fd::3",
        "https::example.com/x",
        "foo::bar",
        "http://example.com/x.git",
        "ftp://example.com/x.git",
        "-oProxyCommand=touch@x:y",
        "git@-oProxyCommand=x:y",
    ],
)
def test_other_transports_are_refused_in_one_line_naming_the_repo(repo: str) -> None:
    with pytest.raises(GitError) as refused:
        remote_transport(repo)
    message = str(refused.value)
    assert "\n" not in message and repr(repo) in message
    assert "https://, ssh://, git://, file:// or user@host:path" in message


def test_a_long_refused_repo_is_named_by_its_first_100_characters() -> None:
    at_most, longer = "ftp://" + "x" * 94, "ftp://" + "x" * 95
    for repo, shown in ((at_most, at_most), (longer, longer[:100] + "…")):
        with pytest.raises(GitError) as refused:
            remote_transport(repo)
        assert str(refused.value).startswith(f"repo {shown!r}: transport 'ftp'")


def test_an_ext_task_fails_in_one_line_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    with pytest.raises(CheckoutError) as refused:
        make_checkout(ext_repo(marker), None, tmp_path / "checkouts" / "x", "x")
    assert "\n" not in str(refused.value) and "transport 'ext'" in str(refused.value)
    assert not marker.exists() and not (tmp_path / "checkouts" / "x").exists()


def test_git_itself_refuses_ext_with_the_clone_settings(tmp_path: Path) -> None:
    """Even a clone that got past di-code's check: git's own protocol settings refuse it."""
    marker = tmp_path / "MARKER"
    done = subprocess.run(
        ["git", *CLONE_CONFIG, "clone", "--", ext_repo(marker), str(tmp_path / "x")],
        cwd=tmp_path,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "transport 'ext' not allowed" in done.stderr
    assert not marker.exists()


def test_no_caller_puts_its_own_settings_before_the_command(tmp_path: Path) -> None:
    """`-c protocol.allow=always` (or any option) before the subcommand would beat the git runner's
    settings: the runner refuses it."""
    marker = tmp_path / "MARKER"
    for args in (
        ["-c", "protocol.allow=always", "clone", ext_repo(marker), "x"],
        ["--exec-path=/tmp", "status"],
        [],
    ):
        with pytest.raises(ValueError) as refused:
            run_git(tmp_path, args)
        assert str(refused.value) == (
            "a git subcommand comes first: an option before it beats this runner's"
        )
    assert not marker.exists()


@pytest.mark.parametrize("where", ["environment", "gitconfig"])
def test_an_ssh_url_is_cloned_with_the_users_own_ssh_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The user's GIT_SSH_COMMAND or ~/.gitconfig `core.sshCommand` reaches the server (here
    a stand-in that runs the server side locally); only a repository could not name one."""
    origin = make_repo(tmp_path / "origin", {"a.txt": "a\n"})
    ssh = tmp_path / "ssh"
    ssh.write_text(f'#!/bin/sh\ntouch {tmp_path / "ssh-ran"}\nexec sh -c "$2"\n')
    ssh.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_VARIANT", "simple")  # host and command only
    if where == "environment":
        monkeypatch.setenv("GIT_SSH_COMMAND", str(ssh))
    else:
        (tmp_path / ".gitconfig").write_text(f"[core]\n\tsshCommand = {ssh}\n")
        monkeypatch.setenv("HOME", str(tmp_path))
    checkout = make_checkout(f"ssh://server{origin}", None, tmp_path / "c" / "s", "s")
    assert (checkout.path / "a.txt").read_text() == "a\n"
    assert (tmp_path / "ssh-ran").exists()


def test_a_failed_clone_says_why_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git ends a failed ssh clone with advice lines: the error is its `fatal:` line."""
    ssh = tmp_path / "ssh"
    ssh.write_text("#!/bin/sh\necho 'ssh: connect to host server port 22: refused' >&2\nexit 255\n")
    ssh.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(ssh))
    monkeypatch.setenv("GIT_SSH_VARIANT", "simple")
    with pytest.raises(CheckoutError) as failed:
        make_checkout("git@server:org/x.git", None, tmp_path / "c" / "x", "x")
    assert str(failed.value) == "git clone failed: fatal: Could not read from remote repository."
    assert not (tmp_path / "c" / "x").exists()


def test_the_task_file_check_refuses_the_repo_with_its_line(
    run_batch: RunBatch, tmp_path: Path
) -> None:
    marker = tmp_path / "MARKER"
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "ok", "repo": str(repo), "prompt": "hi"},
            {"id": "evil", "repo": ext_repo(marker), "prompt": "hi"},
        ],
    )
    done = run_batch(str(tasks), "--out", "r.jsonl")
    assert done.returncode == 2, done.stderr
    [line] = [line for line in done.stderr.splitlines() if "tasks.jsonl:" in line]
    assert f"{tasks}:2: repo 'ext::sh -c touch% " in line  # the repo, shortened if long
    assert line.endswith("transport 'ext' is not allowed (only " + ALLOWED + ")")
    assert not marker.exists() and not (tmp_path / "r.jsonl").exists()
