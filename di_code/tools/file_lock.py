"""One asyncio lock per real file path, so write and edit on one file never interleave.

Two edits of one file that run concurrently (a parallel tool batch, two agents in one process)
would otherwise both read the old text and the second write would lose the first edit. The
locks live in a weak dictionary: a lock exists only while someone holds or awaits it.
"""

from __future__ import annotations

import asyncio
import weakref
from pathlib import Path

_locks: weakref.WeakValueDictionary[Path, asyncio.Lock] = weakref.WeakValueDictionary()


def file_lock(path: Path) -> asyncio.Lock:
    """The lock for `path` (already resolved); hold a reference while using it."""
    lock = _locks.get(path)
    if lock is None:
        lock = asyncio.Lock()
        _locks[path] = lock
    return lock
