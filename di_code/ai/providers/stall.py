"""When a streamed reply has stalled: judged by the SSE events it completes, not by its bytes.

Counting bytes lets a broken server run forever by trickling a byte a second inside one event;
counting events cannot be fooled that way. The rules, from the time the response began:

- before anything arrives, the first-byte timeout (a local model reads the whole prompt first);
- once part of an event has arrived, that event must complete within the stall timeout;
- after an event, the next must come within the stall timeout, but keep-alive comment lines
  (`: ping`, sent by proxies while a model thinks) keep the reply waiting up to the first-byte
  timeout after its last event, never longer.
"""

from __future__ import annotations

from collections.abc import Callable


class StallClock:
    """The deadline for the reply's next progress; `saw` moves it after each piece read.

    A plain class: its state is set by its own methods, and it is made once per request."""

    __slots__ = (
        "_cap",
        "_events",
        "_keepalives",
        "_pending",
        "deadline",
        "first_byte",
        "now",
        "seconds",
        "stall",
        "why",
    )

    def __init__(self, first_byte: float, stall: float, now: Callable[[], float]) -> None:
        self.first_byte, self.stall, self.now = first_byte, stall, now
        self.deadline = self._cap = now() + first_byte
        # what the deadline waits through, for the error: `stream stalled (no reply for 120 s)`
        self.why = "no reply"
        self.seconds = first_byte
        self._events = self._keepalives = 0
        self._pending = False

    def saw(self, events: int, keepalives: int, pending: bool) -> None:
        """After a piece: `events` completed by it, the decoder's count of keep-alive lines so
        far, and whether it holds part of an event not yet complete."""
        now = self.now()
        if events:
            self._events += events
            self._cap = now + self.first_byte
            self._set(now + self.stall, "no data", self.stall)
        if keepalives > self._keepalives and not pending:
            self._keepalives = keepalives
            deadline = max(self.deadline, min(now + self.stall, self._cap))
            if deadline == now + self.stall:
                self._set(deadline, "no data", self.stall)
            else:  # held at the first-byte timeout, which keep-alives alone cannot pass
                self._set(deadline, "only keep-alives", self.first_byte)
        if pending and (events or not self._pending):
            started = now + self.stall
            if self._events:
                started = min(started, self.deadline)
            self._set(started, "no complete event", self.stall)
        self._pending = pending

    def _set(self, deadline: float, why: str, seconds: float) -> None:
        self.deadline, self.why, self.seconds = deadline, why, seconds
