"""Cooperative cancellation that crosses every async boundary: provider, loop and tools.

Listeners run synchronously inside `abort()`, so a provider can cancel its HTTP task and a
tool can kill its process group the moment the user presses Ctrl-C.
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
        self._listeners: list[AbortListener] = []

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
            self._listeners.append(listener)

    def remove_listener(self, listener: AbortListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

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
        for listener in listeners:
            listener(reason)


class AbortController:
    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: Any = None) -> None:
        self.signal._fire("aborted" if reason is None else reason)
