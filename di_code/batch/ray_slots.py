"""`--max-requests` on a Ray cluster: one keeper of the slots for every node, a relay per task.

A slot file can only be locked on one machine, so on a cluster the slots are kept by a Ray
actor (`SlotKeeper`: N per provider endpoint). A task's `di-code run` process asks a local
Unix socket for a slot (request_slots' socket mode); the relay behind it, a thread in the Ray
worker that runs the task, asks the keeper, answers once granted, and gives the slot back when
the request's connection closes, which also happens when the task's process dies. A Ray worker
that dies while holding a grant cannot give it back: that slot stays taken until the batch ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import tempfile
import threading
from pathlib import Path
from typing import Any


class SlotKeeper:
    """The Ray actor (async: a waiting `acquire` does not block the others)."""

    def __init__(self, count: int) -> None:
        self._count = count
        self._slots: dict[str, asyncio.Semaphore] = {}

    async def acquire(self, endpoint: str) -> None:
        await self._semaphore(endpoint).acquire()

    async def release(self, endpoint: str) -> None:
        self._semaphore(endpoint).release()

    def _semaphore(self, endpoint: str) -> asyncio.Semaphore:
        return self._slots.setdefault(endpoint, asyncio.Semaphore(self._count))


def start_keeper(ray: Any, count: int) -> Any:
    """The keeper for this batch, on the cluster (it needs no CPU of its own)."""
    return ray.remote(num_cpus=0)(SlotKeeper).remote(count)


class SlotRelay:
    """A Unix socket in this worker process that passes its task's slot requests to the keeper."""

    def __init__(self, ray: Any, keeper: Any) -> None:
        self._ray, self._keeper = ray, keeper
        self._folder = Path(tempfile.mkdtemp(prefix="di-code-slots-"))  # short: socket paths
        self.path = self._folder / "relay"
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.path))
        self._server.listen()
        threading.Thread(target=self._serve, daemon=True).start()

    def __enter__(self) -> SlotRelay:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:  # closed: the task is over
                return
            threading.Thread(target=self._grant, args=(connection,), daemon=True).start()

    def _grant(self, connection: socket.socket) -> None:
        with connection, contextlib.suppress(OSError):
            endpoint = connection.makefile("rb").readline().decode().rstrip("\n")
            self._ray.get(self._keeper.acquire.remote(endpoint))
            try:
                connection.sendall(b"1")
                while connection.recv(1024):  # until the request ends and the client closes
                    pass
            finally:
                self._keeper.release.remote(endpoint)
