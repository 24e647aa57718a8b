"""Run a shell command in its own process group, stream its output, and stop it for good.

The command runs as `bash -c` (`sh -c` without bash) with `start_new_session=True`, stdin from
/dev/null, and stdout and stderr on one pipe that we create, so their output interleaves as the
command wrote it. Waiting for the exit and reading the pipe are separate: a background child
that inherited the pipe (`sleep 1000 &`) keeps it open forever, so once the main process has
exited we read for at most EXIT_GRACE more seconds and then close our end.

The pipe is read straight from its fd with `loop.add_reader` and `os.read` in READ_CHUNK
blocks, with the pipe enlarged to PIPE_SIZE where Linux allows it: a command that writes
gigabytes then costs a few thousand reads rather than a stream of 64 KB wake-ups.

Stopping (timeout or abort) sends SIGTERM to the whole group, waits up to KILL_AFTER seconds
for every live member to go, then sends SIGKILL. Group members are found in /proc (zombies do
not count, since nothing may reap an orphan in a container); without /proc, `killpg(pgid, 0)`.

The command starts through di_code.system.children, which remembers its group: a command may leave
background jobs (`server &`, `nohup`) that are meant to outlive the call but not di-code, and
every group with a live member is stopped at exit. A job that leaves its group (`setsid`)
escapes this, as do the command's children when di-code is killed with SIGKILL; only the
sandbox's pid namespace catches those.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal as signals
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from di_code.system.abort import AbortSignal
from di_code.system.children import group_members, signal_group
from di_code.tools.process.launcher import start_program
from di_code.tools.process.program_env import installed_program

EXIT_GRACE = 0.2
KILL_AFTER = 2.0
POLL = 0.02
READ_CHUNK = 1024 * 1024
PIPE_SIZE = 1024 * 1024
READS_PER_WAKEUP = 8
"""Reads in one callback before the loop gets a turn, so a fast writer cannot starve it."""

StopReason = Literal["timeout", "aborted"]
OutputSink = Callable[[bytes], None]


@dataclass(frozen=True, slots=True)
class Exit:
    code: int | None
    """The return code; negative when the shell died of a signal (Python's convention)."""
    stopped: StopReason | None = None
    killed: bool = False
    """SIGTERM was not enough: the group had to be sent SIGKILL."""


def signal_name(number: int) -> str:
    """`SIGKILL` for 9, the number itself for one Python does not name: how a command's (or a
    job's) death by a signal is told."""
    try:
        return signals.Signals(number).name
    except ValueError:
        return str(number)


def shell() -> str:
    """The shell every command starts in, never a repository's (installed_program)."""
    return installed_program("bash") or "/bin/sh"


async def run_in_group(
    argv: Sequence[str],
    cwd: str,
    timeout: float,
    signal: AbortSignal,
    sink: OutputSink,
    env: Mapping[str, str],
) -> Exit:
    """Run `argv`, feeding its output to `sink`, until it exits or is stopped."""
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    try:
        _enlarge(write_fd)
        proc = await start_program(
            argv, stdin=subprocess.DEVNULL, stdout=write_fd, stderr=write_fd, cwd=cwd,
            env=dict(env),
        )  # fmt: skip
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    stop: asyncio.Future[StopReason] = loop.create_future()

    def request_stop(reason: StopReason) -> None:
        if not stop.done():
            stop.set_result(reason)

    def on_abort(_: object) -> None:
        request_stop("aborted")  # on the loop: the signal hands a listener to its own loop

    signal.add_listener(on_abort)
    timer = loop.call_later(timeout, request_stop, "timeout")
    eof = read_pipe(loop, read_fd, sink)
    waiter = asyncio.create_task(proc.wait())
    try:
        first: set[asyncio.Future[Any]] = {waiter, stop}
        await asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED)
        killed = False
        if not waiter.done():
            killed = await terminate_group(proc.pid, waiter)
        await asyncio.wait({eof}, timeout=EXIT_GRACE)
        if eof.done():
            eof.result()
        return Exit(proc.returncode, stop.result() if stop.done() else None, killed)
    finally:
        timer.cancel()
        signal.remove_listener(on_abort)
        loop.remove_reader(read_fd)
        os.close(read_fd)
        if proc.returncode is None:
            signal_group(proc.pid, signals.SIGKILL)


def _enlarge(fd: int) -> None:
    """Ask for a PIPE_SIZE pipe buffer (Linux only; the default 64 KB stays otherwise)."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, set_size, PIPE_SIZE)


def read_pipe(loop: asyncio.AbstractEventLoop, fd: int, sink: OutputSink) -> asyncio.Future[None]:
    """Feed everything read from `fd` to `sink`; the future is done at end of file.

    A sink that fails ends the future with its error at once (even if a background child keeps
    the pipe open) and is fed no more, but the pipe is still drained so that the command is not
    left blocked on it.
    """
    os.set_blocking(fd, False)
    eof: asyncio.Future[None] = loop.create_future()

    def finish(error: Exception | None) -> None:
        if eof.done():
            return
        if error is None:
            eof.set_result(None)
        else:
            eof.set_exception(error)

    def feed(chunk: bytes) -> None:
        try:
            sink(chunk)
        except Exception as exc:
            finish(exc)

    def on_readable() -> None:
        try:
            for _ in range(READS_PER_WAKEUP):
                chunk = os.read(fd, READ_CHUNK)
                if not chunk:
                    loop.remove_reader(fd)
                    return finish(None)
                if not eof.done():
                    feed(chunk)
        except BlockingIOError:
            pass
        except OSError as exc:
            loop.remove_reader(fd)
            finish(exc)

    loop.add_reader(fd, on_readable)
    return eof


async def terminate_group(pgid: int, waiter: asyncio.Task[int]) -> bool:
    """SIGTERM the group, SIGKILL whatever is left after KILL_AFTER; True if KILL was needed."""
    loop = asyncio.get_running_loop()
    signal_group(pgid, signals.SIGTERM)
    deadline = loop.time() + KILL_AFTER
    while group_members(pgid) and loop.time() < deadline:
        await asyncio.sleep(POLL)
    killed = bool(group_members(pgid))
    if killed:
        signal_group(pgid, signals.SIGKILL)
    await waiter
    return killed
