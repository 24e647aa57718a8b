"""A cap on model requests in flight across processes: `di-code batch --max-requests N`.

The batch driver names a folder and N in `DI_CODE_REQUEST_SLOTS` ("N:FOLDER"); each request
holds an exclusive `flock` on one of N slot files while it streams. The cap is per provider:
each endpoint (its base URL) has its own N files, so a slow provider does not hold back
requests to another. The kernel drops a lock when its holder dies, so a killed task never
keeps a slot. Without the variable a request takes no slot at all.

On a cluster the slots are kept by one keeper for all the nodes (di_code.batch.ray_slots):
the variable is then "socket:PATH", a local Unix socket that grants a slot by sending one byte
after the endpoint's line, and takes it back when the connection closes (also when the task
dies).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

SLOTS_VARIABLE = "DI_CODE_REQUEST_SLOTS"
SOCKET_PREFIX = "socket:"
POLL_SECONDS = 0.05


def slots_value(count: int, folder: Path) -> str:
    return f"{count}:{folder}"


@asynccontextmanager
async def request_slot(endpoint: str = "", spec: str | None = None) -> AsyncIterator[None]:
    """Hold one of `endpoint`'s shared slots while the block runs (waits, cancellably, for a
    free one)."""
    spec = os.environ.get(SLOTS_VARIABLE) if spec is None else spec
    if spec and spec.startswith(SOCKET_PREFIX):
        async with _socket_slot(spec.removeprefix(SOCKET_PREFIX), endpoint):
            yield
        return
    count, _, folder = (spec or "").partition(":")
    if not count.isdigit() or int(count) < 1 or not folder:
        yield
        return
    import hashlib  # only in a batch: a plain `run` does not load it for this

    name = hashlib.sha256(endpoint.encode()).hexdigest()[:12]
    fd = await _take(Path(folder), name, int(count))
    try:
        yield
    finally:
        os.close(fd)


async def _take(folder: Path, name: str, count: int) -> int:
    while True:
        for number in range(count):
            fd = os.open(folder / f"{name}-{number}", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return fd
        await asyncio.sleep(POLL_SECONDS)


@asynccontextmanager
async def _socket_slot(path: str, endpoint: str) -> AsyncIterator[None]:
    reader, writer = await asyncio.open_unix_connection(path)
    try:
        writer.write(endpoint.encode() + b"\n")
        await writer.drain()
        await reader.readexactly(1)  # the grant
        yield
    finally:
        writer.close()
