"""Work a stop leaves behind (di_code.system.left_behind): the signal ends the wait, not the work,
and the event loop's end does not wait for what was abandoned."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys

import pytest

from di_code.ai import AbortController
from di_code.system.left_behind import LeftBehind, unless_aborted

BOUND = 20.0
"""Seconds: a hang is what is caught."""


async def swallowing(started: asyncio.Event, release: asyncio.Event) -> None:
    """Code di-code does not control: it swallows every cancellation until `release` is set
    (never, but by a test that must leave its event loop clean)."""
    started.set()
    while not release.is_set():
        with contextlib.suppress(asyncio.CancelledError):
            await release.wait()


async def test_the_result_comes_when_no_abort_does() -> None:
    async def answer() -> int:
        return 42

    assert await unless_aborted(answer(), AbortController().signal) == 42


async def test_an_abort_leaves_work_behind_that_swallows_its_cancellation() -> None:
    controller, started, release = AbortController(), asyncio.Event(), asyncio.Event()
    work = swallowing(started, release)
    waiting = asyncio.ensure_future(unless_aborted(work, controller.signal))
    await started.wait()
    controller.abort()
    with pytest.raises(LeftBehind):
        await asyncio.wait_for(waiting, BOUND)
    release.set()  # pytest's loop waits for every task at its end


async def test_work_that_listens_hands_back_its_result_within_the_grace() -> None:
    controller = AbortController()

    async def listening() -> str:
        await controller.signal.wait()
        await asyncio.sleep(0.01)  # its own clean-up
        return "output so far"

    running = unless_aborted(listening(), controller.signal, grace=BOUND)
    asyncio.get_running_loop().call_soon(controller.abort)
    assert await running == "output so far"


def test_the_loops_end_does_not_wait_for_what_was_left_behind() -> None:
    """In a process of its own: a task abandoned there stays pending until that process ends."""
    program = """
import asyncio, os
from di_code.ai import AbortController
from di_code.system import left_behind
from tests.system.test_left_behind import swallowing

async def main():
    controller, started = AbortController(), asyncio.Event()
    work = left_behind.unless_aborted(swallowing(started, asyncio.Event()), controller.signal)
    waiting = asyncio.ensure_future(work)
    await started.wait()
    controller.abort()
    try:
        await waiting
    except left_behind.LeftBehind:
        return "left behind"

print(left_behind.run(main()), flush=True)
os._exit(0)  # as di-code ends (di_code.cli.app): no teardown that would collect the task
"""
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=BOUND
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "left behind\n", "")


@pytest.mark.parametrize("mode", [[], ["-X", "dev"]], ids=["plain", "dev-mode"])
def test_a_child_a_stop_abandoned_is_let_go_before_the_loop_closes(mode: list[str]) -> None:
    """A child still running when the loop ends, its pipes read by a task the end cancels: the
    loop's end ends it and closes its pipes. Left to the garbage collector after the loop
    closed, that close raised `Event loop is closed` (a traceback on stderr, in a hostile stop
    test whenever a collection came before the exit), its end was reported to a closed loop,
    and Python's development mode named the unclosed transports and the still-running child.
    The collection here is forced at once, as the exit's clean-ups could make one."""
    program = """
import asyncio, gc, os, subprocess, threading
from di_code.system import children, left_behind

async def main():
    child = await children.start_child("sleep", "1000", stdout=subprocess.PIPE)
    asyncio.ensure_future(child.communicate())  # cancelled by the loop's end
    await asyncio.sleep(0)

left_behind.run(main())
children.kill_children()  # as at exit: what is still running ends
for watcher in threading.enumerate():
    if watcher.name.startswith("asyncio-waitpid"):
        watcher.join()
gc.collect()
print("collected", flush=True)
os._exit(0)
"""
    done = subprocess.run(
        [sys.executable, *mode, "-c", program], capture_output=True, text=True, timeout=BOUND
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "collected\n", "")
