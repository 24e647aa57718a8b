"""Work the event loop must not wait for (encoding a 100 MB request body), on a thread of its
own that a stop can leave behind."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def on_own_thread(work: Callable[[], T]) -> T:
    """`work()` on a new daemon thread while the loop goes on. A cancelled caller returns at
    once and leaves the thread to end on its own: asyncio.to_thread's pool is joined when the
    loop closes, so a long call there would hold up the exit after Ctrl-C. `work` must let go
    of the GIL now and then (C code that holds it throughout stops the loop all the same)."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()  # as asyncio.to_thread does
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        try:
            outcome: tuple[T | None, BaseException | None] = (context.run(work), None)
        except BaseException as exc:  # handed to the caller, as if raised where it awaits
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=run, name="di-code-worker", daemon=True).start()
    return await done
