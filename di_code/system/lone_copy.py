"""Work done in a forked copy of the process, whose only thread is the caller's.

In the process itself, every system call lets another thread take the GIL, and a thread that
holds it in C, one call after another (a tool's backtracking regular expression), keeps it for
its whole next call: a walk of /proc, hundreds of calls, then takes minutes. The copy has no
such thread. What it does must take no lock (a thread left out of the copy may have held it
for ever) and start no thread; its signals are blocked, it runs no exit handler.
"""

from __future__ import annotations

import contextlib
import os
import signal
import warnings
from collections.abc import Callable, Iterable


def done_in_lone_copy(work: Callable[[], object], within: float, blocked: Iterable[int]) -> bool:
    """Run `work` in a copy of this process (the signals `blocked` held back there), and wait for
    the copy to end, `within` seconds at most (one still working then goes on alone); False
    when no copy could be made (out of processes or memory), and nothing ran."""
    import select  # asyncio's already whenever a thread can compete (not before `--help`)

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
            work()
        finally:
            os._exit(0)
    os.close(copy_alive)
    with contextlib.suppress(OSError, ValueError):
        select.select([ended], [], [], within)  # readable once the copy's end of it is closed
    os.close(ended)
    return True
