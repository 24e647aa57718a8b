"""Streaming Markdown whose total cost grows linearly with the reply.

A reply arrives in small pieces. Re-rendering the whole Markdown on every piece costs
O(n²) over the reply; instead the text is split into top-level blocks (as markdown-it sees
them, so code fences, lists and tables are never cut) and every block that is followed by
another one is finished: it is printed once into the scrollback and never drawn again. Only
the unfinished tail is live (a transient area) and re-rendered, at most `fps` times a second.

Why the result equals rendering the whole reply at once: in CommonMark a block that another
block follows is closed and nothing later can change it, and Rich renders each top-level
block as it closes. The one thing Rich carries from one block to the next is whether a blank
line goes before it, so each finished chunk is rendered together with the block before it
and that block's own lines are dropped. Known limit: a link reference definition that comes
after the link using it cannot reach back into the scrollback.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from rich.console import Console, RenderableType
from rich.segment import Segment, SegmentLines

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from rich.live import Live

CODE_THEME = "monokai"


class LiveArea(Protocol):
    """Where the unfinished part of the output is drawn; `show(None)` clears it."""

    def show(self, renderable: RenderableType | None) -> None: ...


class NoLive:
    """Piped output: nothing is drawn until it is final."""

    def show(self, renderable: RenderableType | None) -> None:
        return None


class RichLive:
    """A transient Rich Live area: started on the first show, stopped (and erased) on None."""

    def __init__(self, console: Console, fps: float = 10.0) -> None:
        self._console = console
        self._fps = fps
        self._live: Live | None = None

    def show(self, renderable: RenderableType | None) -> None:
        if renderable is None:
            if self._live is not None:
                self._live.stop()
                self._live = None
            return
        if self._live is None:
            from rich.live import Live

            self._live = Live(
                renderable,
                console=self._console,
                transient=True,
                refresh_per_second=self._fps,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()
        else:
            self._live.update(renderable)


def default_live(console: Console) -> LiveArea:
    """A live area for a terminal, none for a pipe or a dumb terminal."""
    if console.is_terminal and not console.is_dumb_terminal:
        return RichLive(console)
    return NoLive()


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt().enable("strikethrough").enable("table")


def block_starts(text: str) -> list[int]:
    """Line numbers where the top-level blocks of `text` start, as Rich's parser sees them."""
    return [
        token.map[0]
        for token in _parser().parse(text)
        if token.level == 0 and token.nesting >= 0 and token.map is not None
    ]


def _line_offset(text: str, line: int) -> int:
    """Character offset of line number `line` (0-based) in `text`."""
    offset = 0
    for _ in range(line):
        offset = text.index("\n", offset) + 1
    return offset


def markdown(text: str) -> RenderableType:
    from rich.markdown import Markdown

    return Markdown(text, code_theme=CODE_THEME)


class MarkdownStream:
    """Feed it the reply with `update(full_text)` or `append(delta)`, then `finish()`."""

    def __init__(
        self,
        console: Console,
        *,
        clock: Callable[[], float] = time.monotonic,
        live: LiveArea | None = None,
        fps: float = 12.0,
    ) -> None:
        self._console = console
        self._clock = clock
        self._live = default_live(console) if live is None else live
        self._interval = 1.0 / fps
        self._seen = 0
        self._tail = ""
        self._previous = ""
        """The last printed block: rendered again before the next chunk (see the module doc)."""
        self._scanned = 0
        self._last_refresh: float | None = None

    @property
    def tail(self) -> str:
        """The text not yet printed to the scrollback."""
        return self._tail

    def update(self, text: str) -> None:
        """`text` is the whole reply so far (it only ever grows)."""
        self.append(text[self._seen :])

    def append(self, delta: str) -> None:
        if not delta:
            return
        self._seen += len(delta)
        self._tail += delta
        now = self._clock()
        if self._last_refresh is not None and now - self._last_refresh < self._interval:
            return
        self._last_refresh = now
        self._commit(self._finished_length())
        self._live.show(markdown(self._tail) if self._tail.strip() else None)

    def finish(self) -> None:
        """Print whatever is left; the live area is cleared."""
        self._live.show(None)
        self._commit(len(self._tail))

    def _finished_length(self) -> int:
        """How much of the tail is made of finished blocks (0 if none)."""
        complete = self._tail.rfind("\n") + 1
        if complete == self._scanned:
            return 0
        self._scanned = complete
        starts = block_starts(self._tail[:complete])
        if len(starts) < 2:
            return 0
        return _line_offset(self._tail, starts[-1])

    def _commit(self, length: int) -> None:
        if length == 0:
            return
        chunk, self._tail = self._tail[:length], self._tail[length:]
        self._scanned = max(0, self._scanned - length)
        lines = self._render_lines(self._previous + chunk)
        skip = len(self._render_lines(self._previous)) if self._previous else 0
        if len(lines) > skip:
            self._console.print(SegmentLines(lines[skip:], new_lines=True))
        starts = block_starts(chunk)
        if starts:
            self._previous = chunk[_line_offset(chunk, starts[-1]) :]

    def _render_lines(self, text: str) -> list[list[Segment]]:
        segments = self._console.render(markdown(text), self._console.options)
        return list(Segment.split_lines(segments))
