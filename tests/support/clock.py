"""A clock a test moves by hand, for the code that takes one (`clock=`): a policy on time
(a back-off, a duration shown, a hold) is checked by moving it, never by sleeping."""

from __future__ import annotations


class ManualClock:
    """Callable like time.monotonic; `now` changes only when the test sets it."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
