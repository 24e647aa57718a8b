"""Where the chat prints (`sys.stdout` and `sys.stderr` while it runs): above the prompt while
one is drawn, straight to the terminal between two prompts, and always in the order written.

prompt-toolkit's `patch_stdout` hands every line to a thread of its own, which writes it
straight to the terminal when it finds no prompt running. Between two prompts that thread
races the event loop: a line printed last (a command's answer, "Undid prompt 1.") could reach
the terminal after the next prompt had been drawn, and the prompt, never told, did not draw
itself again: the user saw the line where the prompt should be and no prompt. Here only the
loop's thread writes: at once when no prompt is drawn, else in one `run_in_terminal` (which
erases the prompt, writes, draws it again) for what a short while printed. Only whole lines
are printed: a line's start printed above the prompt would be drawn over when the prompt is
drawn again, and a key written in pieces (each flushed) would reach the terminal piece by
piece, each too short to be hidden.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO, cast

from prompt_toolkit.application import get_app_or_none, run_in_terminal

from di_code.system.text_front import TextFront

REDRAW_GAP = 0.05
"""Text printed within this long goes above the prompt together: each batch erases and draws
the prompt (and its live area) again, so a fast stream draws it at most 20 times a second."""

LONGEST_PARTIAL = 65536
"""A partial line longer than this is ended with a newline and printed: what waits is bounded."""


class Scrollback(TextFront):
    """A text file for the chat's prints, in front of the terminal; see the module docstring."""

    def __init__(self, terminal: TextIO, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(terminal)
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self._pending: list[str] = []
        self._partial: list[str] = []
        self._waiting = 0  # characters in _partial
        self._batch: asyncio.TimerHandle | None = None
        self._drawing: set[asyncio.Future[None]] = set()  # the loop keeps tasks weakly

    def write(self, text: str) -> int:
        """Whole lines are printed; the rest waits for its newline (or the chat's end)."""
        if self._elsewhere(self.write, text):
            return len(text)
        lines, newline, rest = text.rpartition("\n")
        if not newline:
            self._partial.append(text)
            self._waiting += len(text)
            if self._waiting > LONGEST_PARTIAL:  # a progress line redrawn with \r, never ended
                self.write("\n")
            return len(text)
        self._waiting = len(rest)
        self._pending += [*self._partial, lines, newline]
        self._partial = [rest] if rest else []
        self._print()
        return len(text)

    def flush(self) -> None:
        """The whole lines a batch holds go to the terminal now, ahead of anything drawn after
        this call through `run_in_terminal` (a partial line still waits for its end)."""
        if self._elsewhere(self.flush):
            return
        if self._batch is not None:
            self._batch.cancel()
            self._above_prompt()

    def close(self) -> None:
        """Print what is left, the prompt gone (the chat's end)."""
        if self._batch is not None:
            self._batch.cancel()
        self._pending += self._partial
        self._partial = []
        self._write_pending()

    def _elsewhere(self, method: Callable[..., object], *text: str) -> bool:
        """Off the loop's thread, `method` is run on it (in the order of the calls): True."""
        if threading.get_ident() == self._loop_thread:
            return False
        try:
            self._loop.call_soon_threadsafe(method, *text)
        except RuntimeError:  # the loop is closed: no prompt is drawn any more
            self._stream.write("".join(text))
            self._stream.flush()
        return True

    def _print(self) -> None:
        app = get_app_or_none()
        if app is None or not app.is_running:
            self._write_pending()  # and what a batch still held, first
        elif self._batch is None:
            self._batch = self._loop.call_later(REDRAW_GAP, self._above_prompt)

    def _above_prompt(self) -> None:
        self._batch = None
        if self._pending:  # else a write between two prompts printed it
            drawing = asyncio.ensure_future(run_in_terminal(self._write_pending))
            self._drawing.add(drawing)
            drawing.add_done_callback(self._drawing.discard)

    def _write_pending(self) -> None:
        text = "".join(self._pending)
        self._pending = []
        if text:
            self._stream.write(text)
            self._stream.flush()


@contextmanager
def printing_above_the_prompt() -> Iterator[None]:
    """`sys.stdout` and `sys.stderr` go through one Scrollback until the block ends."""
    original_stdout, original_stderr = sys.stdout, sys.stderr
    scrollback = Scrollback(original_stdout, asyncio.get_running_loop())
    sys.stdout = sys.stderr = cast(TextIO, scrollback)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = original_stdout, original_stderr
        scrollback.close()
