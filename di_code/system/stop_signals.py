"""SIGINT, SIGTERM and SIGHUP from the first instruction to the last: `install` is the entry
point's first call, before stdin is read or any server starts, and its handlers stay to exit.

- While a command is `responding(act)`, the first signal runs `act(number)` on the event loop
  that was running when it began (or at once when there was none). A watchdog thread ends the
  process if the loop has not run it within ACT_WITHIN seconds (a blocked loop cannot hold a
  stop back), or if the process has not ended EXIT_WITHIN seconds after the signal (nor can an
  exit held up by code di-code does not control: a plugin's thread that Python joins at exit).
- Outside of it (start-up, reading the prompt, starting MCP servers for `run`, the clean-up
  after), there is nothing to save yet or any more, and a signal ends the process at once.
- A second signal within SECOND_WITHIN seconds of the first ends the process at once.
- Whichever thread the kernel hands a signal to (another one while the main thread blocks
  signals, as glibc's pthread_create does for an instant while it makes a thread), its number
  reaches a thread of ours (`_take_up`): Python runs handlers on the main thread only, when
  that thread next runs, and a main thread asleep in the event loop with nothing due would
  never run it. That thread wakes the loop; a signal whose handler has still not run within
  ACT_WITHIN seconds ends the process at once.

Ending at once: the terminal's modes as they were at start, every child's group killed
(di_code.system.children), the fsync of every file written and not yet synced (up to
SYNC_WITHIN seconds: a prompt's line waits for its answer's start to be synced), the signal
named on stderr, exit 128 + the first signal's number; done by a forked copy of the process,
which no other thread of it slows (`end_now`). Each session entry is in its file as it comes:
nothing else needs a flush.

A stdout whose reader is gone (`| head`) is a stop too, as SIGPIPE is to a Unix tool: the
writer that finds it calls `output_closed`, which acts as a SIGPIPE would (exit 141), quietly;
within `reader_watched`, a pipe's reader leaving is seen at once, with nothing written.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn

# loaded now: an import while ending would make system calls, each a wait beside a thread
# that holds the GIL
from di_code.system.lone_copy import ended_by_lone_copy

if TYPE_CHECKING:
    import asyncio
    import threading

STOP_SIGNALS = {
    signal.SIGINT: "interrupted",
    signal.SIGTERM: "terminated",
    signal.SIGHUP: "hung up",
}
OUTPUT_CLOSED = signal.SIGPIPE
"""Not handled (Python ignores it, so a write fails with EPIPE instead): `output_closed`."""
SECOND_WITHIN = 2.0
ACT_WITHIN = 1.0
EXIT_WITHIN = 2.0
"""A clean stop takes about half a second (a tool that ignores its signal is left behind after
0.5 s: di_code.agent.tool_call); this bounds what no clean path can promise."""
CHILDREN_WITHIN = 1.0
"""After a signal, the clean exit's SIGTERM to the children turns into SIGKILL by then at the
latest (di_code.system.children.stop_children): a child that ignores TERM must not make the
stop last the watchdog's EXIT_WITHIN."""
SYNC_WITHIN = 0.5
"""Seconds ending at once waits for the fsync of lines written and not yet synced (a prompt's,
whose sync starts with its answer: di_code.system.disk_sync): a disk that holds an fsync
longer does not hold the end."""
COPY_WITHIN = SYNC_WITHIN + 0.5
"""Seconds ending at once waits for the copy of di-code that does its work (`end_now`): its
kills take milliseconds, its fsyncs what the disk takes; one still running then finishes
alone."""
SWITCH_WHILE_STOPPING = 1e-3
"""Python's switch interval once a stop has begun (its default: 5 ms): how long a thread that
wants the GIL waits before the one holding it must let go. A tool's thread left computing
takes the GIL at each of the stop's system calls (hundreds: a /proc walk) and kept it 5 ms
each time: the clean stop took over a second, and with a tool that had set 50 ms, until the
watchdog's EXIT_WITHIN (tests/hostile/test_hostile_stops.py). Not lower: a thread holding
the GIL in C call after call makes the stop's thread let go just as soon (0.1 ms: the aborted
answer was not saved before the watchdog)."""
TERMINAL_RESET = b"\x1b[?25h\x1b[?2004l"
"""Shown cursor, bracketed paste off: what a full-screen prompt may have left changed."""


class _State:
    """What the handler knows; plain (no dataclasses): this module loads before `--help`."""

    def __init__(self) -> None:
        self.responder: responding | None = None
        self.first: tuple[int, float] | None = None
        """The signal that began the stop, and when."""
        self.terminal: tuple[int, list[Any]] | None = None
        """A terminal's descriptor and its modes at start."""
        self.saying: int | None = None
        """A pipe's reading end holding one byte: whoever reads it names the stop on stderr (the
        clean path, `end_now` or its copy, which shares the pipe): once is enough."""
        self.handled: threading.Event | None = None
        """Set once `_on_signal` has run (on the main thread, or for a closed output): a stop
        has begun, and what ends it is that function's (`install` makes it)."""


_state = _State()


def install() -> None:
    """Handle the stop signals from now on; remember the terminal's modes."""
    _state.terminal = _terminal_modes()
    for number in STOP_SIGNALS:
        signal.signal(number, _on_signal)
    if _state.handled is None:  # once per process
        _hear_every_delivery()
        _state.saying = _saying_pipe()  # before any copy is forked: they share it


def _hear_every_delivery() -> None:
    """Python's own C-level handler, on whatever thread it runs, writes each signal's number to
    the wakeup descriptor (signal.set_wakeup_fd): a pipe that `_take_up` reads on a thread of
    its own. (An event loop given a signal handler of its own, as prompt-toolkit's for a
    resized window, takes the descriptor over, and wakes itself on every signal meanwhile.)"""
    import threading

    _state.handled = threading.Event()
    reading, writing = os.pipe2(os.O_CLOEXEC)
    os.set_blocking(writing, False)  # a full pipe loses a number; it never blocks the handler
    signal.set_wakeup_fd(writing, warn_on_full_buffer=False)
    taking = threading.Thread(target=_take_up, args=(reading,), name="stop-deliveries")
    taking.daemon = True
    taking.start()


class responding:
    """Within, the first stop signal runs `act(number)` (on the running loop, if any)."""

    def __init__(self, act: Callable[[int], None]) -> None:
        self.act = act
        self.loop: asyncio.AbstractEventLoop | None = None
        self._previous: responding | None = None

    def __enter__(self) -> None:
        if "asyncio" in sys.modules:  # not loaded: no loop runs
            try:
                self.loop = sys.modules["asyncio"].get_running_loop()
            except RuntimeError:
                self.loop = None
        self._previous, _state.responder = _state.responder, self

    def __exit__(self, *_: object) -> None:
        _state.responder = self._previous


class Stopped(BaseException):
    """Raised where the main thread is by the first stop signal within `unwinding()`: the work
    unwinds, its clean-ups run (a half-written file beside the one it replaces is removed),
    and the command ends with `exit_code`."""

    def __init__(self, number: int) -> None:
        super().__init__(number)
        self.exit_code = 128 + number


@contextlib.contextmanager
def unwinding() -> Iterator[None]:
    """Within, for work with no event loop (`di-code export`), the first stop signal raises
    Stopped instead of ending the process at once; the caller says it (`say`) and exits."""

    def stop(number: int) -> None:
        raise Stopped(number)

    with responding(stop):
        yield


async def until_stopped(work: Awaitable[int]) -> int:
    """`work`'s exit code, or 128 + N when stop signal N cancelled it."""
    import asyncio

    task = asyncio.current_task()
    received: list[int] = []

    def cancel(number: int) -> None:
        received.append(number)
        if task is not None:
            task.cancel()

    with responding(cancel):
        try:
            code = await work  # a server may end quietly when cancelled
        except (asyncio.CancelledError, Exception):
            if not received:  # once stopped, an error on the way out (a terminal gone after
                raise  # SIGHUP, that prompt-toolkit still writes to) does not change the code
        return 128 + received[0] if received else code


def output_closed() -> None:
    """Stop as for a signal OUTPUT_CLOSED: stdout's reader is gone."""
    silence_stdout()
    _on_signal(OUTPUT_CLOSED, None)


@contextlib.contextmanager
def reader_watched() -> Iterator[None]:
    """Within (on a running event loop): when stdout is a pipe, its reader leaving is seen at
    once, not at the next write: a pipe's write end reports an error (POLLERR) as soon as its
    last reader closes, which the loop is told of. A command that writes nothing for a long
    time (`run`'s text and json write the answer at the end) is then stopped as `| head -c 1`
    ends a Unix tool (`output_closed`), instead of running on for no reader."""
    import asyncio
    import select
    import stat

    try:
        is_pipe = stat.S_ISFIFO(os.fstat(1).st_mode)
    except OSError:
        is_pipe = False
    if not is_pipe:
        yield
        return
    loop = asyncio.get_running_loop()
    poller = select.poll()
    poller.register(1, 0)  # no event asked: only an error or a hang-up is reported

    def check() -> None:
        if any(events & select.POLLERR for _, events in poller.poll(0)):
            loop.remove_reader(1)
            output_closed()

    try:
        loop.add_reader(1, check)  # an error on a descriptor wakes its readers
    except (OSError, ValueError, RuntimeError):  # not one the loop can watch: the next write
        yield
        return
    try:
        yield
    finally:
        loop.remove_reader(1)


def silence_stdout() -> None:
    """Point stdout at /dev/null once its reader is gone, so that nothing written later (the
    flush at exit) fails again."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)


def children_due() -> float | None:
    """The monotonic time by which a stopped process's children are to be killed, or None
    when no stop is ending it (no signal, or one long gone that did not end the process, as
    chat's Ctrl-C key): a normal exit gives them their whole grace."""
    first = _state.first
    if first is None or time.monotonic() - first[1] > EXIT_WITHIN:
        return None
    return first[1] + CHILDREN_WITHIN


def _on_signal(number: int, _frame: object) -> None:
    now = time.monotonic()
    sys.setswitchinterval(SWITCH_WHILE_STOPPING)  # every signal here ends the process
    if _state.handled is not None:
        _state.handled.set()
    first = _state.first
    if first is not None and now - first[1] < SECOND_WITHIN:
        end_now(first[0])
    _state.first = (number, now)
    responder = _state.responder
    if responder is None:
        end_now(number)
    if responder.loop is None:
        responder.act(number)
        return
    import threading  # loaded already: asyncio runs

    acted = threading.Event()

    def act() -> None:
        acted.set()
        responder.act(number)

    try:
        responder.loop.call_soon_threadsafe(act)
    except RuntimeError:  # the loop is closed: nothing will act
        end_now(number)
    watchdog = threading.Thread(target=_watch, args=(acted, number, now), name="stop-watchdog")
    watchdog.daemon = True
    watchdog.start()


def _take_up(reading: int) -> None:
    """For each stop signal delivered: wake the loop, whose thread then runs the handler (a
    thread that takes the interpreter's lock looks for pending signals); still not run after
    ACT_WITHIN seconds (the main thread blocked elsewhere, in a read that the signal did not
    interrupt), end the process."""
    handled = _state.handled
    assert handled is not None
    while True:
        numbers = [number for number in os.read(reading, 64) if number in STOP_SIGNALS]
        if not numbers or handled.is_set():
            continue
        responder = _state.responder
        if responder is not None and responder.loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the wait below ends it
                responder.loop.call_soon_threadsafe(_nothing)
        if not handled.wait(ACT_WITHIN):
            end_now(numbers[0])


def _nothing() -> None:
    """A callback that only wakes the loop."""


def _watch(acted: threading.Event, number: int, signalled: float) -> None:
    if not acted.wait(ACT_WITHIN):
        end_now(number)
    time.sleep(max(0.0, signalled + EXIT_WITHIN - time.monotonic()))
    end_now(number)  # still here: what holds the exit is not waited for


def end_now(number: int) -> NoReturn:
    """End the process at once (from any thread): terminal, children, files, a line, exit code.

    That work is done by a copy of the process with no other thread (di_code.system.lone_copy):
    here, a tool's thread that holds the GIL in C call after call made it take minutes
    (tests/hostile/test_hostile_stops.py). Without a copy (none can be made, or one is held
    by an at-fork handler: tests/hostile/test_hostile_stop_copy.py), this process does it."""
    ended_by_lone_copy(
        lambda parent: _leave(number, parent), 128 + number, COPY_WITHIN, STOP_SIGNALS
    )


def _leave(number: int, parent: int | None = None) -> None:
    """Leave the terminal as it was, no child, the files written synced, the stop named: in
    di-code, or in its copy (`parent`: di-code, whose children these are)."""
    _restore_terminal()
    children = sys.modules.get("di_code.system.children")  # not loaded: no child was started
    if children is not None:
        children.kill_children(parent)
    disk_sync = sys.modules.get("di_code.system.disk_sync")  # not loaded: nothing written
    if disk_sync is not None:
        if parent is None:
            disk_sync.wait_synced(SYNC_WITHIN)
        else:
            disk_sync.sync_in_copy()
    say(number)


def say(number: int) -> None:
    """Name the stop on stderr in one line, once: a clean stop that names it and then does not
    end in time (a deaf child, a joined thread) is ended by `end_now`, which must not repeat it.
    A closed output ends quietly, as Unix tools do."""
    said = STOP_SIGNALS.get(signal.Signals(number))
    if said is None or not _first_to_say():
        return
    with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
        os.write(2, f"di-code: {said}\n".encode())


def _first_to_say() -> bool:
    """True once in this process and its copies together: one reads their pipe's byte."""
    _state.saying = _saying_pipe() if _state.saying is None else _state.saying
    with contextlib.suppress(OSError):
        return os.read(_state.saying, 1) == b"!"
    return False


def _saying_pipe() -> int:
    """The reading end of a pipe that holds one byte (read, the pipe is at its end)."""
    reading, writing = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
    os.write(writing, b"!")
    os.close(writing)
    return reading


def _terminal_modes() -> tuple[int, list[Any]] | None:
    import termios

    for fd in (0, 1, 2):
        try:
            if os.isatty(fd):
                return fd, termios.tcgetattr(fd)
        except (OSError, termios.error):
            continue
    return None


def _restore_terminal() -> None:
    """The modes saved at start, if the terminal is still there, ours (in the foreground: a
    background process that set them would be stopped) and changed."""
    import termios

    if _state.terminal is None:
        return
    fd, modes = _state.terminal
    try:
        if os.tcgetpgrp(fd) != os.getpgrp() or termios.tcgetattr(fd) == modes:
            return
        termios.tcsetattr(fd, termios.TCSANOW, modes)
        os.write(fd, TERMINAL_RESET)
    except (OSError, termios.error):
        pass
