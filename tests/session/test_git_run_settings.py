"""The git runner's settings and defaults, each seen in what real git then does: the private
index a caller names, no input unless given, no system config, no prompt for a password, and
git's failures (silent, or in bytes that are not UTF-8) told in one line."""

from __future__ import annotations

import http.server
import os
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import di_code
from di_code.session.git_run import Blocked, GitError, clone, run_git, work_tree_top
from tests.support.git import git, past_this_second

EMPTY_BLOB = b"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    return work


def test_a_private_index_is_the_one_git_writes(repo: Path, tmp_path: Path) -> None:
    """Snapshots stage into an index of their own: the user's staged changes stay as they are."""
    (repo / "a.txt").write_text("a\n")
    private = tmp_path / "private-index"
    run_git(repo, ["add", "a.txt"], index_file=str(private))
    assert run_git(repo, ["ls-files", "-z"], index_file=str(private)) == b"a.txt\0"
    assert git(repo, "ls-files") == ""  # the repository's own index holds nothing


def test_a_git_given_no_input_reads_none(repo: Path) -> None:
    """Without `stdin`, git reads an empty input (never di-code's own standard input)."""
    assert run_git(repo, ["hash-object", "--stdin"]) == EMPTY_BLOB


def test_a_git_that_fails_saying_nothing_is_one_line(repo: Path) -> None:
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "one")
    (repo / "a.txt").write_text("changed\n")
    with pytest.raises(GitError) as raised:
        run_git(repo, ["diff", "--quiet"])  # exits 1, prints nothing
    assert str(raised.value) == "git diff failed: no reason given"


def test_a_git_error_in_bytes_that_are_not_utf8_is_one_line(repo: Path) -> None:
    with pytest.raises(GitError) as raised:
        run_git(repo, ["cat-file", "-t", os.fsdecode(b"\xff")])
    assert str(raised.value) == "git cat-file failed: fatal: Not a valid object name \ufffd"


def test_a_work_tree_whose_path_is_not_utf8_is_found(tmp_path: Path) -> None:
    work = tmp_path / os.fsdecode(b"caf\xe9")  # a Latin-1 name
    subprocess.run(["git", "init", "-q", os.fsencode(work)], check=True)
    (work / "sub").mkdir()
    assert work_tree_top(work / "sub") == work


def test_the_system_config_is_never_read(repo: Path, tmp_path: Path) -> None:
    """A system config (/etc/gitconfig, here one bubblewrap puts in its place for one di-code
    process) may say anything; di-code's git reads only the repository's and the user's."""
    if subprocess.run(["bwrap", "--dev-bind", "/", "/", "true"], check=False).returncode:
        pytest.fail("bubblewrap cannot run here")
    system = tmp_path / "gitconfig"
    system.write_text("[planted]\n\tkey = from-the-system\n")
    git(repo, "config", "planted.other", "from-the-repository")
    script = (
        "import sys\nfrom pathlib import Path\nfrom di_code.session.git_run import run_git\n"
        "sys.stdout.buffer.write(run_git(Path(sys.argv[1]), ['config', '--list']))\n"
    )
    package_root = str(Path(di_code.__file__).parent.parent)  # the di_code this test imports
    env = {**os.environ, "PYTHONPATH": package_root}
    bound = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(system), "/etc/gitconfig"]
    shown = subprocess.run(
        [*bound, sys.executable, "-c", script, str(repo)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    ).stdout
    assert "planted.other=from-the-repository" in shown
    assert "planted.key" not in shown


class AsksCredentials(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="x"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def https_asking_credentials(tmp_path: Path) -> Iterator[str]:
    """An https server on 127.0.0.1 (a certificate made here) that answers every request with
    401: a username and password are wanted."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    made = ["-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)]
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", *made],
        check=True,
        capture_output=True,
    )
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), AsksCredentials)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/x.git"
    finally:
        server.shutdown()
        server.server_close()


def test_a_clone_asked_for_a_password_fails_without_prompting(
    https_asking_credentials: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's config (HOME) trusts the server's certificate and names no credential
    helper: git has no password, and says so instead of asking on a terminal."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".gitconfig").write_text("[http]\n\tsslVerify = false\n")
    with pytest.raises(GitError) as raised:
        clone(https_asking_credentials, tmp_path / "copy")
    assert str(raised.value) == (
        f"git clone failed: fatal: could not read Username for "
        f"'{https_asking_credentials.removesuffix('/x.git')}': terminal prompts disabled"
    )


def test_a_filter_is_found_in_the_repository_whatever_git_dir_says(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The filters to turn off are listed from the repository git then reads, not from the
    one di-code's own environment points at (GIT_DIR, which names no filter)."""
    marker = tmp_path / "ran"
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    with (repo / ".git/config").open("a") as config:
        config.write(f'[filter "lfs"]\n\tprocess = touch {marker}\n')
    (repo / ".gitattributes").write_text("* filter=lfs\n")
    os.utime(repo / "a.txt", (0, 0))  # stat changed, size not: git reads the content
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    run_git(repo, ["status", "--porcelain", "-z"])
    assert not marker.exists()


def test_a_fed_git_past_its_time_is_killed(repo: Path) -> None:
    """Input given as bytes is fed from a file, under the same time bound: here git reads a
    path from it, then waits on that FIFO, open at both ends (this test holds one), for ever."""
    os.mkfifo(repo / "pipe")
    held = os.open(repo / "pipe", os.O_RDWR)  # git's open does not block: its read does
    try:
        with pytest.raises(Blocked) as raised:
            run_git(repo, ["hash-object", "--stdin-paths"], stdin=b"pipe\n", timeout=0.5)
    finally:
        os.close(held)
    assert str(raised.value) == "git hash-object did not end within 0.5 s"


def test_git_status_never_rewrites_the_users_index(repo: Path) -> None:
    """`git status` refreshes the index it reads and writes it back under `.git/index.lock`,
    an optional lock: a di-code stopped or killed meanwhile would leave that lock and make
    every git command of the user fail. di-code's git takes no optional lock."""
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "a")
    past_this_second()
    os.utime(repo / "a.txt")  # the same bytes, newer stat data: a refresh would write it
    index = repo / ".git" / "index"
    written = index.stat().st_mtime_ns, index.stat().st_ino
    run_git(repo, ["status", "--porcelain"])
    assert (index.stat().st_mtime_ns, index.stat().st_ino) == written
