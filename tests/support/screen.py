"""What a person sees of di-code in a pseudo-terminal: its output fed through a terminal
emulator (pyte) that answers cursor position requests as a real terminal does, read until a
positive marker shows."""

from __future__ import annotations

import io
import time
from collections.abc import Callable

import pexpect
import pyte
import pytest

TIMEOUT = 20
"""Seconds a screen (or a chat's prompt) is waited for before the test fails."""

CPR = "\x1b[6n"
"""A cursor position request (a terminal answers `ESC [ row ; column R`)."""


class Screen:
    """The child's screen, `rows` by `columns`, with the last `history` lines scrolled off
    it kept (`seen`)."""

    def __init__(
        self, child: pexpect.spawn, rows: int = 30, columns: int = 100, history: int = 0
    ) -> None:
        self.child = child
        self.screen = (
            pyte.HistoryScreen(columns, rows, history=history)
            if history
            else pyte.Screen(columns, rows)
        )
        self.stream = pyte.Stream(self.screen)
        self._written = io.StringIO()
        child.logfile_read = self._written
        self._held = ""
        """The start of a cursor position request that the last read cut off."""

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def written(self) -> str:
        """Everything the child wrote so far, escapes and all, whoever read it (this screen or
        pexpect's `expect`): what a terminal was sent, for what it must never be sent."""
        return self._written.getvalue()

    @property
    def seen(self) -> str:
        """The lines scrolled off the screen (as many as `history` keeps), then the screen."""
        kept = self.screen.history.top if isinstance(self.screen, pyte.HistoryScreen) else []
        scrolled = ["".join(line[x].data for x in sorted(line)) for line in kept]
        return "\n".join([*scrolled, self.text])

    def pump(self, seconds: float) -> list[str]:
        """Read what the child writes for `seconds` (the lines then), answering cursor position
        requests as a terminal does: once each, with the cursor where everything written before
        the request left it (prompt-toolkit makes its drawing as tall as the rows below that
        position, so a wrong answer scrolls the screen). A request cut in two by a read is
        answered once its second half arrives."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self._read(min(left, 0.1))
        return self.lines

    def wait_until(self, found: Callable[[list[str]], bool], what: str) -> list[str]:
        """Read until `found(lines)` holds (the lines then); fail, showing the screen, after
        TIMEOUT."""
        deadline = time.monotonic() + TIMEOUT
        while not found(self.lines):
            if time.monotonic() > deadline:
                pytest.fail(f"never saw {what}:\n{self.text}")
            self._read(0.1)  # once: what a child wrote before it ended is looked at first
        return self.lines

    def wait_for(self, needle: str, after: str = "") -> list[str]:
        """Read until `needle` shows below the first `after` on the screen (anywhere, unless
        told): a screen is drawn in pieces, so what is below a line may not be there yet."""
        return self.wait_until(
            lambda _: needle in (self.text.partition(after)[2] if after else self.text),
            repr(needle) + (f" below {after!r}" if after else ""),
        )

    def _read(self, timeout: float) -> None:
        """One read of what the child wrote (none within `timeout`: nothing), a cursor position
        request answered; pexpect.EOF once the child has ended and all is read."""
        try:
            data = self._held + self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return
        kept = next((n for n in range(len(CPR) - 1, 0, -1) if data.endswith(CPR[:n])), 0)
        data, self._held = data[: len(data) - kept], data[len(data) - kept :]
        first, *requested = data.split(CPR)
        self.stream.feed(first)
        for part in requested:
            cursor = self.screen.cursor
            self.child.send(f"\x1b[{cursor.y + 1};{cursor.x + 1}R")
            self.stream.feed(part)
