"""Waiting on real processes in tests: whether one still runs, and polling a condition."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SAFETY_TIMEOUT = 30.0
MARK = "DI_CODE_STOP_MARK"
"""An environment variable that tells a test's processes (di-code and what it started)."""


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie (exited, not yet collected)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll a real condition; the timeout only guards against a hang."""
    deadline = time.monotonic() + SAFETY_TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


async def until(condition: Callable[[], bool], what: str) -> None:
    """`wait_until` for a test on the event loop: polls without blocking it."""
    deadline = time.monotonic() + SAFETY_TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def awaiting_in(task: asyncio.Future[Any], function: str) -> bool:
    """Whether `task` is suspended inside a coroutine function named `function`: the positive
    marker that work has reached its wait (a loop turn or two is not enough when the work first
    imports or hands off to a thread)."""
    coroutine = task.get_coro() if isinstance(task, asyncio.Task) else None
    while coroutine is not None:
        code = getattr(coroutine, "cr_code", None)
        if code is not None and code.co_name == function:
            return True
        coroutine = getattr(coroutine, "cr_await", None)
    return False


def group_sleeper(pid_file: Path) -> str:
    """A bash command whose `sleep` runs in the background and writes its pid to `pid_file`:
    the sleep is a member of the command's process group but not the process the tool started,
    so only a kill of the whole group ends it (a test then waits on that pid, not on a clock).
    It sleeps ten times SAFETY_TIMEOUT: a wait for its end cannot pass by the sleep running out."""
    return f"sleep {SAFETY_TIMEOUT * 10:g} & echo $! > {pid_file}; wait"


async def sleeper_started(pid_file: Path) -> int:
    """The pid `group_sleeper` wrote, once it has written it."""
    await until(lambda: pid_file.exists() and pid_file.read_text().endswith("\n"), "the sleep")
    return int(pid_file.read_text())


def live_pids(holds: Callable[[Path], bool]) -> list[int]:
    """The live processes whose /proc entry `holds` (an entry that vanishes or may not be
    read, as another user's, does not)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                chosen = holds(entry)
            except OSError:
                continue
            if chosen and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def marked(mark: str) -> list[int]:
    """The live processes whose environment holds MARK=`mark`."""
    needle = f"{MARK}={mark}".encode()
    return live_pids(lambda entry: needle in (entry / "environ").read_bytes().split(b"\0"))


def command_line(pid: int) -> str:
    """`pid` and its command line, for a message naming a process left running."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return f"{pid} (gone)"
    return f"{pid} {argv.decode(errors='replace').strip()}"


def processes_running(marker: str, under: Path | None = None) -> list[int]:
    """The pids whose command line holds `marker` (whatever namespace started them); with
    `under`, only those working in that folder (another test's tasks run beside, under xdist)."""

    def holds(entry: Path) -> bool:
        # any process's arguments, not only di-code's: bytes that are not UTF-8 are no match
        command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        if under is not None and not (entry / "cwd").readlink().is_relative_to(under):
            return False
        return marker in command

    return live_pids(holds)


WRITE_SYSCALL = {"x86_64": 1, "aarch64": 64}
"""`write`'s number (the first field of /proc/PID/syscall) on the machines tests run on."""


def blocked_writing(pid: int, fd: int) -> bool:
    """Whether the process's main thread is in a `write` to `fd` now: one that blocks because
    nobody reads the other end (a full pipe or terminal) stays there."""
    import platform

    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    number = WRITE_SYSCALL[platform.machine()]
    return fields[:2] == [str(number), hex(fd)]
