"""Ending a child's wait at the opening of a FIFO, by giving it a writer that writes nothing.

A program that reads the files it walks into (rg reading each folder's .gitignore) blocks in
`open` when one of them is a FIFO: the kernel holds the open until a writer comes, which is
never. No flag of rg's skips such a file, so `release_fifo_waits` watches the child instead:
a thread of it asleep in the kernel's FIFO open (`wait_for_partner`, its /proc wchan) inside
`openat` has the path it opens read from its memory; that FIFO is opened for writing here and
closed at once, so the child's open returns and its read sees an empty file. The path is
opened with O_PATH first (following a link, as the child does) and used only when it is a
FIFO: nothing else is ever opened for writing, whatever the memory read says. Linux only
(x86-64 and arm64 `openat` numbers); elsewhere it does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import stat

FIFO_OPEN_WAIT = b"wait_for_partner"
"""Where Linux's open() of a FIFO waits for the other end (/proc/PID/wchan)."""
OPENAT = {"x86_64": 257, "aarch64": 56}.get(platform.machine())
CHECK_EVERY = 0.5
"""Seconds between two looks at the child's threads: a search that ends sooner pays nothing."""
PATH_MAX = 4096


async def release_fifo_waits(pid: int) -> None:
    """Until cancelled (or the child is gone): every CHECK_EVERY seconds, end each wait of
    `pid`'s threads at a FIFO's open (module docstring)."""
    if OPENAT is None:
        return
    while True:
        await asyncio.sleep(CHECK_EVERY)
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return
        for thread in threads:
            path = _fifo_opened_by(pid, thread)
            if path is not None:
                _open_and_close(pid, path)


def opening_a_fifo(pid: int, thread: str | None = None) -> bool:
    """Whether process `pid` (its thread `thread`, else its main one) waits in the kernel for
    a FIFO's other end."""
    where = f"/proc/{pid}" if thread is None else f"/proc/{pid}/task/{thread}"
    try:
        with open(f"{where}/wchan", "rb") as wchan:
            return wchan.read().strip() == FIFO_OPEN_WAIT
    except OSError:
        return False


def _fifo_opened_by(pid: int, thread: str) -> bytes | None:
    """The path a thread of `pid` is opening, when it waits at a FIFO's open in `openat`."""
    if not opening_a_fifo(pid, thread):
        return None
    try:
        with open(f"/proc/{pid}/task/{thread}/syscall") as syscall:
            fields = syscall.read().split()
        if len(fields) < 3 or fields[0] != str(OPENAT):
            return None
        return _string_at(pid, int(fields[2], 16))
    except (OSError, ValueError):
        return None


def _string_at(pid: int, address: int) -> bytes | None:
    """The NUL-ended string at `address` in `pid`'s memory (at most PATH_MAX bytes)."""
    found = b""
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as memory:
        while len(found) < PATH_MAX:
            memory.seek(address + len(found))
            page_left = 4096 - (address + len(found)) % 4096  # never read into the next page
            piece = memory.read(page_left)
            if not piece:
                return None
            end = piece.find(b"\0")
            if end >= 0:
                return found + piece[:end]
            found += piece
    return None


def _open_and_close(pid: int, path: bytes) -> None:
    """Open `path` (relative to the child's working folder) for writing and close it, when
    it is a FIFO; a FIFO whose reader is gone by now refuses (ENXIO), which is as good."""
    where = os.path.join(f"/proc/{pid}/cwd".encode(), path)
    with contextlib.suppress(OSError):
        handle = os.open(where, os.O_PATH | os.O_CLOEXEC)
        try:
            if stat.S_ISFIFO(os.fstat(handle).st_mode):
                os.close(os.open(f"/proc/self/fd/{handle}", os.O_WRONLY | os.O_NONBLOCK))
        finally:
            os.close(handle)
