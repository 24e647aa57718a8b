"""AbortController / AbortSignal: listeners, reasons and waiting."""

from __future__ import annotations

import asyncio
import threading

from di_code.ai import AbortController


def test_listeners_fire_once_with_the_reason() -> None:
    controller = AbortController()
    seen: list[object] = []
    controller.signal.add_listener(seen.append)
    removed: list[object] = []
    controller.signal.add_listener(removed.append)
    controller.signal.remove_listener(removed.append)
    controller.abort("user pressed Ctrl-C")
    controller.abort("again")
    assert seen == ["user pressed Ctrl-C"] and removed == []
    assert controller.signal.aborted and controller.signal.reason == "user pressed Ctrl-C"


def test_a_listener_added_after_the_abort_runs_at_once() -> None:
    controller = AbortController()
    controller.abort()
    seen: list[object] = []
    controller.signal.add_listener(seen.append)
    assert seen == ["aborted"]


async def test_wait_returns_when_aborted() -> None:
    controller = AbortController()
    waiter = asyncio.create_task(controller.signal.wait())
    await asyncio.sleep(0)
    assert not waiter.done()
    controller.abort("stop")
    assert await waiter == "stop"
    assert await controller.signal.wait() == "stop"


def test_an_abort_from_a_worker_thread_wakes_the_loop_and_runs_every_listener() -> None:
    """A tool running in a thread may stop its own call: what waits on the loop must wake, and
    a listener registered on the loop runs there (asyncio futures are not thread-safe)."""
    controller = AbortController()
    loop_thread: list[int] = []

    async def main() -> object:
        loop = asyncio.get_running_loop()
        loop.set_debug(True)  # debug mode refuses a future resolved from another thread
        controller.signal.add_listener(lambda _reason: loop_thread.append(threading.get_ident()))
        waiting = asyncio.ensure_future(controller.signal.wait())
        await asyncio.sleep(0)
        threading.Thread(target=controller.abort, args=("from a thread",)).start()
        return await waiting

    results: list[object] = []
    runner = threading.Thread(target=lambda: results.append(asyncio.run(main())), daemon=True)
    runner.start()
    runner.join(30)  # a loop left unwoken waits forever
    assert results == ["from a thread"]
    assert loop_thread == [runner.ident]
