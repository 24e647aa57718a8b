"""Cooperative cancellation that crosses every async boundary: provider, loop and tools.

Listeners run synchronously inside `abort()`, so a provider can cancel its HTTP task and a
tool can kill its process group the moment the user presses Ctrl-C. A listener added while an
event loop runs belongs to that loop: an abort from another thread (a tool running in a worker
thread stops its own call) hands it to its loop, since asyncio's futures and tasks are not
thread-safe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

AbortListener = Callable[[Any], None]


class AbortSignal:
    __slots__ = ("_aborted", "_listeners", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[tuple[AbortListener, asyncio.AbstractEventLoop | None]] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> Any:
        return self._reason

    def add_listener(self, listener: AbortListener) -> None:
        """Call `listener(reason)` on abort; at once if the signal has already fired."""
        if self._aborted:
            listener(self._reason)
        else:
            self._listeners.append((listener, _running_loop()))

    def remove_listener(self, listener: AbortListener) -> None:
        self._listeners = [entry for entry in self._listeners if entry[0] != listener]

    async def wait(self) -> Any:
        """Return the reason once the signal fires."""
        if self._aborted:
            return self._reason
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def resolve(reason: Any) -> None:
            if not future.done():
                future.set_result(reason)

        self.add_listener(resolve)
        try:
            return await future
        finally:
            self.remove_listener(resolve)

    def _fire(self, reason: Any) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        listeners, self._listeners = self._listeners, []
        here = _running_loop()
        for listener, loop in listeners:
            if loop is None or loop is here or loop.is_closed():
                listener(reason)
            else:
                loop.call_soon_threadsafe(listener, reason)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class AbortController:
    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: Any = None) -> None:
        self.signal._fire("aborted" if reason is None else reason)
