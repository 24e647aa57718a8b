"""One writer per session: the process that appends to a session holds it.

Two processes appending to one session would both number their next prompt the same, share
its backup folder and undo each other's files. So a session is held, from the moment it is
opened to go on with (or its first entry written, for a new one) until the process lets it go
or ends: an exclusive `flock` on a lock file beside the session file (`<name>.lock`), taken
without waiting. The kernel drops it when the process dies, however it dies, so a crash leaves
nothing to clean up. A second open of a held session, in another process or in the same one,
is refused with one line (`SessionBusy`); reading a session (`undo --list`, a list) needs no
hold.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from di_code.session.format import SessionError
from di_code.system.private_files import open_private


class SessionBusy(SessionError):
    """Another writer holds the session: one line saying which."""


class SessionHold:
    """One process's hold on one session: `take` it (again after `release`), or SessionBusy;
    the process's end releases it too."""

    def __init__(self, session_id: str) -> None:
        self._id = session_id
        self._fd: int | None = None

    def take(self, session_path: Path) -> SessionHold:
        """Hold the session at `session_path` unless already held (SessionError when its
        lock file cannot be made)."""
        if self._fd is None:
            self._fd = _locked(lock_path(session_path), self._id)
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __del__(self) -> None:  # a session dropped without `release` does not stay held
        with contextlib.suppress(Exception):
            self.release()


def lock_path(session_path: Path) -> Path:
    """The lock file of the session file at `session_path`."""
    return session_path.with_suffix(".lock")


def _locked(lock: Path, session_id: str) -> int:
    """A descriptor holding the exclusive lock on `lock`, taken without waiting."""
    while True:
        try:
            fd = open_private(lock, os.O_RDWR)
        except OSError as exc:
            raise SessionError(f"cannot hold session {session_id}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise SessionBusy(_busy(session_id, holder)) from None
        if _still_there(fd, lock):
            _note_holder(fd)
            return fd
        os.close(fd)  # the file was removed (the session deleted) before we locked it: retry


def _still_there(fd: int, lock: Path) -> bool:
    """Whether the locked file is still the one at `lock` (a lock on a removed file would
    hold nothing: the next process makes a new one)."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(lock, follow_symlinks=False))
    except OSError:
        return False


def _note_holder(fd: int) -> None:
    """The holder's pid in the lock file, for the refusal to name (best effort: a full disk
    leaves it empty, the hold stands)."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)


def _holder(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def _busy(session_id: str, holder: int | None) -> str:
    short = session_id[:12]
    if holder == os.getpid():
        return f"Session {short} is already open here: one session is written by one owner."
    who = f"another di-code process (pid {holder})" if holder else "another di-code process"
    return f"Session {short} is in use by {who}: wait for it to end, or start a new session."
