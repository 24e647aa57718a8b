"""One asyncio lock per real file path, so write and edit on one file never interleave, and the
way file tools run their blocking part in a thread.

Two edits of one file that run concurrently (a parallel tool batch, two agents in one process)
would otherwise both read the old text and the second write would lose the first edit. The
locks live in a weak dictionary: a lock exists only while someone holds or awaits it.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from di_code.system.files.resolve import Target

T = TypeVar("T")

_locks: weakref.WeakValueDictionary[Path, asyncio.Lock] = weakref.WeakValueDictionary()


def file_lock(path: Path) -> asyncio.Lock:
    """The lock for `path` (already resolved); hold a reference while using it."""
    lock = _locks.get(path)
    if lock is None:
        lock = asyncio.Lock()
        _locks[path] = lock
    return lock


async def run_on_file(target: Target, work: Callable[[Target], T], *, serialize: bool) -> T:
    """`work(target)` in a thread (under the file's lock when `serialize`), then the target's
    folder closed. A cancelled caller still waits for the thread, which is short: the folder's
    descriptor must stay open while the thread uses it (a closed number is soon reused by
    another open), and a write keeps the lock until its rename is done."""
    try:
        async with file_lock(target.path) if serialize else contextlib.nullcontext():
            task = asyncio.ensure_future(asyncio.to_thread(work, target))
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                while not task.done():
                    with contextlib.suppress(asyncio.CancelledError):
                        await asyncio.wait([task])
                raise
    finally:
        target.close()
