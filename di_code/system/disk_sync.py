"""fsync on a thread of its own, so that the event loop never waits for the disk.

A line appended with `write` is in the kernel's page cache once the call returns: the
process's crash, kill -9 or exit cannot lose it, only the machine's crash can, until `fsync`
returns. That fsync is the slow part (~40 ms each on a loaded disk, seconds on a slow one), so
a writer writes in its own order and hands the file here: one thread syncs the files handed
over, in the order they came, while the loop goes on.

The thread is not a daemon: the interpreter's exit waits for the last sync (Python joins such
threads before the exit handlers run, see di_code.cli.app), and only as long as a sync is due,
since the thread ends when none is: an idle process has no such thread.

Starting the thread makes the caller wait until the new thread runs, milliseconds on a loaded
machine: a writer whose next step must not wait (a prompt, with the model request about to go
out) hands its file over with `start=False`, and the thread is started by the next file handed
over, `start_syncing` (once the request is out), `wait_synced`, or the interpreter's exit.
"""

from __future__ import annotations

import atexit
import contextlib
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


_exit_registered = False
"""Whether the exit handler that syncs files no thread took (`start=False`) is registered."""


def sync_soon(fd: int, failed: Failed, *, start: bool = True) -> None:
    """fsync `fd`'s file on the sync thread, after every file handed over before it. `fd` is
    duplicated: the caller closes its own at once (a `flock` on it must be let go explicitly,
    LOCK_UN, since the duplicate shares it). `start=False`: no thread is started for it now
    (see the module's docstring)."""
    global _exit_registered
    copy = os.dup(fd)
    with _changed:
        _due.append((copy, failed))
        if not start:
            if not _exit_registered:  # registered after di-code's last handler: runs before it
                atexit.register(_sync_left)
                _exit_registered = True
            return
    start_syncing()


def start_syncing() -> None:
    """Start the sync thread for the files handed over without one (nothing to do when none
    is, or the thread runs)."""
    global _syncing
    with _changed:
        if _syncing or not _due:
            return
        try:
            threading.Thread(target=_sync_due, name="di-code-fsync").start()
        except RuntimeError:  # the interpreter is ending: no new thread, so sync here
            pass
        else:
            _syncing = True
            return
    _sync_left()


def wait_synced(timeout: float | None = None) -> bool:
    """Block until every file handed over so far is synced (True), or `timeout` passed. Call
    it on a thread, never on the loop."""
    start_syncing()
    with _changed:
        return _changed.wait_for(lambda: not _syncing, timeout)


def sync_in_copy() -> None:
    """fsync every file handed over and not taken by the sync thread, in a forked copy of the
    process (stop_signals.end_now): the caller is the copy's only thread, so no lock is taken
    (a thread left out of the copy may have held it for ever). The files the sync thread took
    are its own: a process does not end before its thread inside fsync returns."""
    for copies in _by_file(list(_due)).values():
        with contextlib.suppress(OSError):
            os.fsync(copies[-1][0])


def _sync_left() -> None:
    """Sync, on this thread, the files no sync thread took: at the interpreter's exit (its
    non-daemon threads, a sync thread included, are joined by then), or when none can start."""
    while _synced_some():
        pass


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
        self.deferred = False
        """While True, a file handed over starts no thread (`sync_soon`'s `start`)."""

    def soon(self, fd: int) -> None:
        sync_soon(fd, self._failed, start=not self.deferred)

    def failure(self) -> OSError | None:
        """The failed fsync not taken yet (then forgotten)."""
        failure, self._failure = self._failure, None
        return failure

    def _failed(self, exc: OSError) -> None:
        self._failure = self._failure or exc
