"""Work done in a forked copy of the process, whose only thread is the caller's.

In the process itself, every system call lets another thread take the GIL, and a thread that
holds it in C, one call after another (a tool's backtracking regular expression), keeps it for
its whole next call: a walk of /proc, hundreds of calls, then takes minutes. The copy has no
such thread. What it does must take no lock (a thread left out of the copy may have held it
for ever) and start no thread; its signals are blocked, it runs no exit handler.

Python's fork first runs the at-fork handlers registered in the process, and those may wait:
logging's takes its module lock, which a tool's thread holds for ever if it is stuck
configuring a handler; a plugin's own may never return, in the process or in the copy. A copy
that has not begun its work within FORK_WITHIN seconds is given up, and the work done here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import warnings
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import threading

FORK_WITHIN = 0.5
"""Seconds for the copy to begin its work: a fork takes milliseconds, its handlers as long as
the locks they take are held."""


def ended_by_lone_copy(
    work: Callable[[int | None], object], code: int, within: float, blocked: Iterable[int]
) -> NoReturn:
    """Run `work(pid of this process)` in a copy of it (the signals `blocked` held back there),
    wait for the copy to end, `within` seconds at most (one still working then goes on alone),
    and exit with `code`. Without a copy that began within FORK_WITHIN seconds (out of processes
    or memory, a fork or a copy held by an at-fork handler), `work(None)` is done here: by this
    thread, or by another while this one waits in the fork."""
    import threading  # loaded already: stop_signals.install starts a thread

    forked = threading.Event()
    net = threading.Thread(target=_net, args=(forked, work, code), name="stop-net")
    net.daemon = True
    with contextlib.suppress(RuntimeError):  # no thread can start (out of processes): no net
        net.start()
    if not _done_in_copy(work, within, blocked, forked.set):
        forked.set()  # no fork (or none that began): the net is not needed, this thread works
        work(None)
    os._exit(code)


def _net(forked: threading.Event, work: Callable[[int | None], object], code: int) -> None:
    """Do the work here if the fork has not returned within FORK_WITHIN seconds."""
    if not forked.wait(FORK_WITHIN):
        work(None)
        os._exit(code)


def _done_in_copy(
    work: Callable[[int | None], object],
    within: float,
    blocked: Iterable[int],
    forked: Callable[[], object],
) -> bool:
    """True once a copy began `work` and ended or ran `within` seconds; False when no copy
    could be made or began in time (one that did not is killed), and nothing ran."""
    import select  # asyncio's already whenever a thread can compete (not before `--help`)

    parent = os.getpid()
    try:
        ended, copy_alive = os.pipe2(os.O_CLOEXEC)
    except OSError:
        return False
    try:
        with warnings.catch_warnings():  # Python 3.12 warns of a fork beside threads
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        os.close(ended)
        os.close(copy_alive)
        return False
    if pid == 0:  # pragma: no cover (the copy ends with os._exit: no coverage data)
        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
            os.write(copy_alive, b"+")  # its at-fork handlers have returned
            work(parent)
        finally:
            os._exit(0)
    forked()
    os.close(copy_alive)
    began = False
    with contextlib.suppress(OSError, ValueError):
        began = bool(select.select([ended], [], [], FORK_WITHIN)[0] and os.read(ended, 1))
        if began:
            select.select([ended], [], [], within)  # readable once the copy's end is closed
    os.close(ended)
    if not began:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return began
