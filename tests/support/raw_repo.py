"""Repositories whose blobs are exactly the bytes a test chose (no filter or eol conversion on
the way in), and a reading of any folder as {path: (bytes, executable)} to compare trees."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

RawTree = dict[str, tuple[bytes, bool]]
"""path -> (content, executable); a symlink's content is its target."""

_CLEAN_ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
"""The test's own git ignores any ~/.gitconfig a test plants."""
_IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@t")


def raw_git(repo: Path, *args: str, stdin: bytes = b"") -> bytes:
    done = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", *_IDENTITY, *args],
        cwd=repo,
        env={**os.environ, **_CLEAN_ENV},
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout


def commit_raw(repo: Path, files: RawTree) -> str:
    """A new repository in `repo` (made if absent) whose one commit holds exactly `files`, and
    the same files in its working tree; the commit's name."""
    repo.mkdir(parents=True, exist_ok=True)
    raw_git(repo, "init", "--quiet", "-b", "main")
    rows: list[bytes] = []
    for path, (content, executable) in sorted(files.items()):  # any name: no line protocol
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        target.chmod(0o755 if executable else 0o644)
        blob = raw_git(repo, "hash-object", "-w", "--no-filters", "--stdin", stdin=content)
        mode = b"100755" if executable else b"100644"
        rows.append(b"%s %s\t%s\0" % (mode, blob.strip(), os.fsencode(path)))
    raw_git(repo, "update-index", "-z", "--index-info", stdin=b"".join(rows))
    tree = raw_git(repo, "write-tree").decode().strip()
    commit = raw_git(repo, "commit-tree", tree, "-m", "base").decode().strip()
    raw_git(repo, "update-ref", "refs/heads/main", commit)
    return commit


def blobs_of(repo: Path, commit: str) -> RawTree:
    """The raw bytes and modes of every file in `commit`."""
    listing = raw_git(repo, "ls-tree", "-r", "-z", commit).decode().split("\0")
    tree: RawTree = {}
    for row in filter(None, listing):
        meta, path = row.split("\t", 1)
        mode, _, blob = meta.split()
        tree[path] = (raw_git(repo, "cat-file", "blob", blob), mode == "100755")
    return tree


def read_tree(folder: Path) -> RawTree:
    """Every file below `folder` but `.git` (a folder, or a worktree's file), as bytes and
    executable bit."""
    tree: RawTree = {}
    for directory, folders, names in os.walk(folder):
        links = [name for name in folders if Path(directory, name).is_symlink()]
        folders[:] = [name for name in folders if name != ".git" and name not in links]
        for name in [*(name for name in names if name != ".git"), *links]:
            path = Path(directory, name)
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                tree[path.relative_to(folder).as_posix()] = (os.readlink(path).encode(), False)
            else:
                executable = bool(info.st_mode & 0o100)
                tree[path.relative_to(folder).as_posix()] = (path.read_bytes(), executable)
    return tree


def listing(git_dir: Path) -> dict[str, bytes]:
    """Every file in a git directory with its content: equal listings taken before and after
    mean nothing was written there (git may still freshen a shared object's time, as it does
    whenever an object it would write exists already)."""
    return {
        str(Path(directory, name)): Path(directory, name).read_bytes()
        for directory, _, names in os.walk(git_dir)
        for name in names
    }
