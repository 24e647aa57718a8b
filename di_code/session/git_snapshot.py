"""Snapshots of a git work tree that never touch the user's index, HEAD, branches or stash.

A snapshot is a git tree object of the working tree as it is (tracked files and untracked files
that are not ignored), built in a private index (`GIT_INDEX_FILE`) that starts as a copy of the
user's own: git's stat cache then tells which files changed, so only those are hashed again.
The tree is kept alive by a ref under `refs/di-code/`, which `git gc` respects and no branch
command shows. A snapshot of an unchanged tree writes no new object. Files over a size limit
are left as they are in the index and named in `skipped`: undo cannot restore them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REF_PREFIX = "refs/di-code/"
DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_UNTRACKED_FILES = 5_000
"""More untracked files than this (a repository at $HOME without a .gitignore) are not
captured: hashing them all would fill the repository with copies of unrelated files."""
_SAFE_CONFIG = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")
"""A cloned repository's own config must not run a program (fsmonitor) during a snapshot."""


class GitError(Exception):
    """A git command failed; the message is one line."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    tree: str
    skipped: tuple[str, ...] = ()
    """Paths (relative to the work tree top) too large to capture, or a note that there were
    too many untracked files to capture any."""


@dataclass(frozen=True, slots=True)
class Change:
    """One path that differs between two snapshots: `old_mode`/`new_mode` None when absent."""

    path: str
    old_mode: str | None
    new_mode: str | None


def work_tree_top(folder: Path) -> Path | None:
    """The top of the git work tree `folder` is in, or None (no git, or not a work tree)."""
    if shutil.which("git") is None:
        return None
    try:
        done = subprocess.run(
            ["git", *_SAFE_CONFIG, "rev-parse", "--show-toplevel"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    top = done.stdout.strip()
    return Path(top) if done.returncode == 0 and top else None


class GitSnapshots:
    def __init__(self, top: Path, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> None:
        self.top = top
        self.max_file_bytes = max_file_bytes

    def take(self) -> Snapshot:
        with self._private_index(copy_user_index=True) as env:
            changed = self._lines(["ls-files", "-z", "-m"], env)
            untracked = self._lines(["ls-files", "-z", "-o", "--exclude-standard"], env)
            too_many = len(untracked) > MAX_UNTRACKED_FILES
            changed += [] if too_many else untracked
            skipped = tuple(path for path in changed if self._too_large(path))
            if too_many:
                skipped += (f"{len(untracked):,} untracked files (over {MAX_UNTRACKED_FILES:,})",)
            wanted = sorted(set(changed) - set(skipped))
            if wanted:
                stdin = "".join(f"{path}\0" for path in wanted)
                self._git(["update-index", "-z", "--add", "--remove", "--stdin"], env, stdin)
            tree = self._git(["write-tree"], env).strip()
        return Snapshot(tree, skipped)

    def keep(self, ref_name: str, tree: str) -> None:
        """Point `refs/di-code/<ref_name>` at `tree` so gc keeps it."""
        self._git(["update-ref", REF_PREFIX + ref_name, tree])

    def prune(self, live_sessions: set[str]) -> None:
        """Delete the refs of every session not in `live_sessions` (its file was deleted), so
        `git gc` can drop what only they kept."""
        refs = self._git(["for-each-ref", "--format=%(refname)", REF_PREFIX])
        dead = [
            ref for ref in refs.split() if ref[len(REF_PREFIX) :].split("/")[0] not in live_sessions
        ]
        if dead:
            self._git(["update-ref", "--stdin"], stdin="".join(f"delete {ref}\n" for ref in dead))

    def changes(self, old_tree: str, new_tree: str) -> list[Change]:
        """Every file path that differs between two trees (no rename detection)."""
        if old_tree == new_tree:
            return []
        out = self._git(["diff-tree", "-r", "-z", "--no-renames", old_tree, new_tree])
        fields = out.split("\0")
        changes: list[Change] = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            if not meta.startswith(":"):
                continue
            old_mode, new_mode = meta[1:].split(" ", 2)[:2]
            changes.append(Change(path, _mode(old_mode), _mode(new_mode)))
        return changes

    def restore(self, tree: str, paths: Sequence[str]) -> None:
        """Write `paths` into the work tree exactly as `tree` has them (content and mode)."""
        if not paths:
            return
        with self._private_index(copy_user_index=False) as env:
            self._git(["read-tree", tree], env)
            stdin = "".join(f"{path}\0" for path in paths)
            self._git(["checkout-index", "-f", "-z", "--stdin"], env, stdin)

    def _too_large(self, path: str) -> bool:
        try:
            return (self.top / path).lstat().st_size > self.max_file_bytes
        except OSError:
            return False  # deleted: update-index --remove records that

    @contextmanager
    def _private_index(self, *, copy_user_index: bool) -> Iterator[dict[str, str]]:
        fd, name = tempfile.mkstemp(prefix="di-code-index-")
        os.close(fd)
        try:
            user_index = Path(self._git(["rev-parse", "--git-path", "index"]).strip())
            user_index = user_index if user_index.is_absolute() else self.top / user_index
            if copy_user_index and user_index.is_file():
                shutil.copyfile(user_index, name)
            else:
                os.unlink(name)  # git wants no file rather than an empty one
            yield {**os.environ, "GIT_INDEX_FILE": name}
        finally:
            Path(name).unlink(missing_ok=True)
            Path(name + ".lock").unlink(missing_ok=True)

    def _lines(self, args: list[str], env: dict[str, str]) -> list[str]:
        return [path for path in self._git(args, env).split("\0") if path]

    def _git(self, args: list[str], env: dict[str, str] | None = None, stdin: str = "") -> str:
        try:
            done = subprocess.run(
                ["git", *_SAFE_CONFIG, *args],
                cwd=self.top,
                env=env,
                input=stdin,
                capture_output=True,
                text=True,
                errors="surrogateescape",
                timeout=300,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitError(f"git {args[0]} failed: {exc}") from None
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
            raise GitError(f"git {args[0]} failed: {reason}")
        return done.stdout


def _mode(raw: str) -> str | None:
    return None if raw == "000000" else raw
