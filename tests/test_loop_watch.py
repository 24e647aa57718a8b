"""The loop watch itself (tests/support/loop_watch.py), in a watched Python process as each
di-code a test starts is: a callback that holds its loop is reported, whether it computes or
waits in a system call; one that only waited for a CPU (the machine busy with others) is not."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support import loop_watch

HELD = 0.3
"""Seconds a callback holds its loop in these tests: three times the watch's limit."""

PROGRAM = """
import asyncio, os, subprocess, sys, threading, time

{before}

async def main():
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def callback():
{callback}
        done.set_result(None)

    loop.call_soon(callback)
    await done

asyncio.run(main())
"""


def reports(tmp_path: Path, callback: str, before: str = "") -> tuple[list[str], str]:
    """What the watch reported of a loop that runs `callback` once (after `before`), and what
    the program printed."""
    log = tmp_path / "slow.log"
    source = PROGRAM.format(before=before, callback=textwrap.indent(callback, " " * 8))
    done = subprocess.run(
        [sys.executable, "-c", source],
        env=loop_watch.watched(dict(os.environ), log),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return loop_watch.seen_in(log), done.stdout


def test_a_callback_that_sleeps_is_reported(tmp_path: Path) -> None:
    seen, _ = reports(tmp_path, f"time.sleep({HELD})")
    assert len(seen) == 1 and "callback" in seen[0], seen


def test_a_callback_blocked_in_a_read_is_reported(tmp_path: Path) -> None:
    seen, _ = reports(
        tmp_path,
        f"read, write = os.pipe()\n"
        f"threading.Timer({HELD}, os.write, (write, b'x')).start()\n"
        "os.read(read, 1)",
    )
    assert len(seen) == 1 and "callback" in seen[0], seen


def test_a_callback_that_computes_is_reported(tmp_path: Path) -> None:
    seen, _ = reports(
        tmp_path,
        f"started = time.thread_time()\nwhile time.thread_time() - started < {HELD}:\n    pass",
    )
    assert len(seen) == 1 and "callback" in seen[0], seen


HOG = "import os\nparent = os.getppid()\nprint(flush=True)\nwhile os.getppid() == parent:\n    pass"
"""A process that computes until its parent is gone."""

BUSY_MACHINE = f"""
HOG = {HOG!r}
cpu = min(os.sched_getaffinity(0))
os.sched_setaffinity(0, {{cpu}})
hog = subprocess.Popen([sys.executable, "-c", HOG], stdout=subprocess.PIPE)
hog.stdout.readline()  # it computes on the same CPU (its affinity is this one's) from now on
os.nice(19)  # this thread gets that CPU about once for every 70 times the hog does
"""


def test_a_callback_delayed_only_by_a_busy_machine_is_not_reported(tmp_path: Path) -> None:
    """The callback computes for `HELD` seconds on the wall clock, but another process takes
    its CPU nearly all that time: its thread waits on the run queue, which is not counted."""
    seen, printed = reports(
        tmp_path,
        "started, computed = time.monotonic(), time.thread_time()\n"
        f"while time.monotonic() - started < {HELD}:\n"
        "    pass\n"
        "print(time.thread_time() - computed, flush=True)\n"
        "hog.kill()",
        before=BUSY_MACHINE,
    )
    computed = float(printed)
    assert computed < loop_watch.LIMIT / 2, f"the hog left the callback {computed:.3f} s of CPU"
    assert seen == []


HEAP = "import gc\nheap = [[n] for n in range(4_000_000)]\n"
"""A heap whose full garbage collection takes longer than the watch's limit."""


def test_a_callback_held_only_by_a_garbage_collection_is_not_reported(tmp_path: Path) -> None:
    """A collection is paid by whichever callback trips it, for the whole heap (in pytest,
    mostly the harness's objects): its time is not counted; the callback's own work is."""
    seen, printed = reports(
        tmp_path,
        "started = time.monotonic()\ngc.collect()\nprint(time.monotonic() - started, flush=True)",
        before=HEAP,
    )
    collected = float(printed)
    assert collected > loop_watch.LIMIT, f"the collection took only {collected:.3f} s"
    assert seen == []


def test_a_callback_that_computes_after_a_collection_is_reported(tmp_path: Path) -> None:
    seen, _ = reports(
        tmp_path,
        "gc.collect()\nstarted = time.thread_time()\n"
        f"while time.thread_time() - started < {HELD}:\n    pass",
        before=HEAP,
    )
    assert len(seen) == 1 and "callback" in seen[0], seen


def test_a_callback_that_computes_after_a_collection_on_a_busy_machine_is_reported(
    tmp_path: Path,
) -> None:
    """The collection shares its CPU with a hog, so it waits on the run queue about half its
    time: that wait is taken off once, not once as run-queue time and again as the
    collection's (which left nothing of the computing that follows)."""
    seen, _ = reports(
        tmp_path,
        "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "hog = subprocess.Popen([sys.executable, '-c', HOG], stdout=subprocess.PIPE)\n"
        "hog.stdout.readline()\ngc.collect()\nhog.kill()\nhog.wait()\n"
        "started = time.thread_time()\n"
        f"while time.thread_time() - started < {HELD}:\n    pass",
        before=f"{HEAP}HOG = {HOG!r}\n",
    )
    assert len(seen) == 1 and "callback" in seen[0], seen


def test_a_watched_process_loads_asyncio_only_when_it_uses_it(tmp_path: Path) -> None:
    """The watch waits for asyncio's import: `di-code --help` and `--version` load none."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys; print('asyncio' in sys.modules)"],
        env=loop_watch.watched(dict(os.environ), tmp_path / "slow.log"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "False\n", "")
