"""Work a stop leaves behind: a stop is not a request to the work.

A turn ends when its abort signal fires, whatever its tool does with the signal. Code di-code
does not control (a plugin's `execute` that never looks at its signal, awaits an event nobody
sets, swallows a cancellation, or blocks a thread) is cancelled once and abandoned: nothing
waits for it, not the turn, not the stop, not the process's exit (`run`: the event loop's end
waits only for di-code's own tasks; the process then ends without the interpreter's teardown,
see di_code.cli.app). A tool's process groups are killed by the tool's own abort listener and,
at the latest, by di_code.system.children when the loop ends (`let_go`: nothing of a child is
finalized after the loop) or at exit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

from di_code.system import children
from di_code.system.abort import AbortSignal
from di_code.system.errors import DiCodeError

T = TypeVar("T")

_left: set[asyncio.Future[Any]] = set()
"""Abandoned tasks not yet ended: referenced here so that none is collected (and reported as
destroyed while pending) before the process ends."""


class LeftBehind(DiCodeError):
    """The signal fired before the work ended: the work was cancelled once and abandoned."""


async def unless_aborted(work: Awaitable[T], signal: AbortSignal, grace: float = 0.0) -> T:
    """`work`'s result, or LeftBehind once `signal` has fired and `grace` seconds more have
    passed (the time a tool that listens to the signal has to hand back what it has)."""
    task = asyncio.ensure_future(work)
    stop = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done() and grace > 0:
            await asyncio.wait({task}, timeout=grace)
    except asyncio.CancelledError:  # whoever awaits this is stopped: the work is left too
        leave(task)
        raise
    finally:
        stop.cancel()
    if task.done():
        return task.result()
    leave(task)
    raise LeftBehind


def leave(task: asyncio.Future[Any]) -> None:
    """Cancel `task` once and wait for it nowhere; its outcome, whenever it comes, is dropped."""
    task.cancel()
    if task.done():
        return
    _left.add(task)
    task.add_done_callback(_forget)


def _forget(task: asyncio.Future[Any]) -> None:
    _left.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: an abandoned failure is no "never retrieved" report


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, except that its end cancels every task still running but waits
    only for those not left behind: an abandoned task that swallows its cancellation does not
    hold the exit. (The asynchronous generators' and the default executor's shutdowns, which
    could wait on abandoned work, are skipped when something was left behind.) The children
    started on the loop are let go before it closes (di_code.system.children.let_go)."""
    loop = children.ChildrenLoop()
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(main)
    finally:
        try:
            _end_tasks(loop)
            children.let_go(loop)
            if not _left:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


async def _settle(own: list[asyncio.Task[Any]]) -> None:
    """One turn of the loop at least, so that an abandoned task that does listen to its
    cancellation runs its clean-up (bash's: SIGKILL to its group); then di-code's own."""
    await asyncio.sleep(0)
    if own:
        await asyncio.wait(own)


def _end_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel every task; wait for di-code's own, as `asyncio.run` does for all."""
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    own = [task for task in tasks if task not in _left]
    loop.run_until_complete(_settle(own))
    for task in own:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {"message": "unhandled exception during shutdown", "exception": task.exception()}
            )
