"""AbortController / AbortSignal: listeners, reasons and waiting."""

from __future__ import annotations

import asyncio

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
