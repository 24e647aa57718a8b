"""Bounding work that holds the interpreter: a regular expression that backtracks.

Python's `re` runs a search in C, holding the GIL: a catastrophic pattern (`(a+)+$` on forty
`a`s and a `!`) searches for longer than anyone waits, and no other thread, no watchdog and
not the event loop runs meanwhile. `re` does check for signals while it backtracks, so on the
main thread `time_bound` arms SIGALRM: past its seconds the work is interrupted with
`TookTooLong`. Elsewhere (a helper thread, where no signal arrives) the work is unbounded.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from di_code.system.errors import DiCodeError


class TookTooLong(DiCodeError):
    """The work under `time_bound` ran past its seconds (its caller says what to the user)."""


@contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    """Interrupt the body with TookTooLong after `seconds` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def too_long(number: int, frame: object) -> None:
        raise TookTooLong

    previous = signal.signal(signal.SIGALRM, too_long)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:  # an alarm that comes just now is still caught as TookTooLong
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
