"""fsync on a thread of its own, so that the event loop never waits for the disk.

A line appended with `write` is in the kernel's page cache once the call returns: the
process's crash, kill -9 or exit cannot lose it, only the machine's crash can, until `fsync`
returns. That fsync is the slow part (~40 ms each on a loaded disk, seconds on a slow one), so
a writer writes in its own order and hands the file here: one thread syncs the files handed
over, in the order they came, while the loop goes on.

The thread is not a daemon: the interpreter's exit waits for the last sync (Python joins such
threads before the exit handlers run, see di_code.cli.app), and only as long as a sync is due,
since the thread ends when none is: an idle process has no such thread.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable

Failed = Callable[[OSError], None]
"""Told, on the sync thread, when a file's fsync failed (what was written may be lost)."""

_changed = threading.Condition()
_due: deque[tuple[int, Failed]] = deque()
_syncing = False
"""Whether the sync thread runs (it has work, or is about to end)."""


def sync_soon(fd: int, failed: Failed) -> None:
    """fsync `fd`'s file on the sync thread, after every file handed over before it. `fd` is
    duplicated: the caller closes its own at once (a `flock` on it must be let go explicitly,
    LOCK_UN, since the duplicate shares it)."""
    global _syncing
    copy = os.dup(fd)
    with _changed:
        _due.append((copy, failed))
        if _syncing:
            return
        try:
            threading.Thread(target=_sync_due, name="di-code-fsync").start()
        except RuntimeError:  # the interpreter is ending: no new thread, so sync here
            _due.pop()
        else:
            _syncing = True
            return
    _sync([(copy, failed)])


def wait_synced(timeout: float | None = None) -> bool:
    """Block until every file handed over so far is synced (True), or `timeout` passed. Call
    it on a thread, never on the loop."""
    with _changed:
        return _changed.wait_for(lambda: not _syncing, timeout)


def _sync_due() -> None:
    """Sync what is due until nothing is. The thread ends saying so, whatever went wrong: a
    `_syncing` left True would make every later `wait_synced` wait forever."""
    try:
        while _synced_some():
            pass
    except BaseException:
        _ended()
        raise


def _synced_some() -> bool:
    """Sync the files due now; False when none was (the thread ends, under the same lock that
    found none: a file handed over later starts a thread of its own)."""
    with _changed:
        if not _due:
            _ended()
            return False
        handed = list(_due)
        _due.clear()
    for copies in _by_file(handed).values():
        _sync(copies)
    return True


def _ended() -> None:
    """The sync thread ends (the lock is reentrant: called with it held or not)."""
    global _syncing
    with _changed:
        _syncing = False
        _changed.notify_all()


def _by_file(handed: list[tuple[int, Failed]]) -> dict[tuple[int, int], list[tuple[int, Failed]]]:
    """The copies grouped by the file they open, in the order they came: one fsync of a file
    covers every write to it before the call, so a burst of entries costs one sync."""
    files: dict[tuple[int, int], list[tuple[int, Failed]]] = {}
    for fd, failed in handed:
        status = os.fstat(fd)
        files.setdefault((status.st_dev, status.st_ino), []).append((fd, failed))
    return files


def _sync(copies: list[tuple[int, Failed]]) -> None:
    """fsync the file of `copies` (copies of one file's descriptors) once, then close them."""
    try:
        os.fsync(copies[-1][0])
    except OSError as exc:
        for failed in dict.fromkeys(failed for _, failed in copies):
            failed(exc)
    finally:
        for fd, _ in copies:
            os.close(fd)


class Syncs:
    """One writer's fsyncs, and the first of them that failed, kept until the writer takes it.
    The sync thread holds this, never the writer: a writer let go (a session, and the hold
    it has on its file) is not kept alive by a sync still due."""

    def __init__(self) -> None:
        self._failure: OSError | None = None

    def soon(self, fd: int) -> None:
        sync_soon(fd, self._failed)

    def failure(self) -> OSError | None:
        """The failed fsync not taken yet (then forgotten)."""
        failure, self._failure = self._failure, None
        return failure

    def _failed(self, exc: OSError) -> None:
        self._failure = self._failure or exc
