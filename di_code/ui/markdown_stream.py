"""Streaming Markdown whose total cost grows linearly with the reply.

A reply arrives in small pieces. Re-rendering the whole Markdown on every piece costs
O(n²) over the reply; instead the text is split into top-level blocks (as markdown-it sees
them, so code fences, lists and tables are never cut) and every block that another one
follows (see `opens_block` for a line still being written) is finished: it is printed once
into the scrollback and never drawn again. Only the unfinished tail is live (a transient
area), rendered at most `fps` times a second and once per frame however often the area
redraws; a piece that arrives inside that window is drawn by a timer when it closes, so the
screen lags the text by at most one frame even if the model pauses.

Why the result equals rendering the whole reply at once: in CommonMark a block that another
block follows is closed and nothing later can change it, and Rich renders each top-level
block as it closes. The one thing Rich carries from one block to the next is whether a blank
line goes before it (every element but a rule asks for one), so each finished chunk is
rendered after a one-line stand-in for the block before it (a paragraph or a rule) whose
lines are then dropped. After a block that may hold a link reference definition, that block
itself is the stand-in. Known limit: a link reference definition further back, or after the
link using it, cannot reach into the scrollback.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment, SegmentLines

from di_code.ui.live_fence import FENCE, FencePreview, split_fence

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from rich.live import Live
    from rich.markdown import Markdown

CODE_THEME = "monokai"

ANSWER_DRAWING = ("rich.markdown", "rich.live", "rich.rule", "rich.spinner", "rich.table")
"""What an answer is drawn with, slow enough to import to be seen: the chat imports it off the
loop while the user types the first prompt (system/first_use.py), not when the first answer
arrives."""

STAND_INS = ("x\n\n", "---\n\n")
"""A paragraph and a rule: blocks after which Rich does and does not put a blank line."""

Schedule = Callable[[float, Callable[[], None]], object]
"""Call back after a delay in seconds: the shape of asyncio's `loop.call_later`."""


class LiveArea(Protocol):
    """Where the unfinished part of the output is drawn; `show(None)` clears it."""

    def show(self, renderable: RenderableType | None) -> None: ...


class NoLive:
    """Piped output: nothing is drawn until it is final."""

    def show(self, renderable: RenderableType | None) -> None:
        return None


ECHO_ROOM = 3
"""Columns left free right of the live area: `^C` and the cursor after it."""


class RichLive:
    """A transient Rich Live area: started on the first show, stopped (and erased) on None.
    It is drawn ECHO_ROOM columns narrower than the terminal: the `^C` the terminal echoes
    on Ctrl-C goes after the area's last line, and reaching the last column it would wrap
    to a new line the area does not know of (erasing it would leave its top line behind)."""

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
        from rich.constrain import Constrain

        renderable = Constrain(renderable, max(self._console.width - ECHO_ROOM, 1))
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


def loop_schedule(delay: float, callback: Callable[[], None]) -> None:
    """A timer on the running event loop; with no loop running the next piece draws instead."""
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    loop.call_later(delay, callback)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt().enable("strikethrough").enable("table")


def top_blocks(text: str) -> list[tuple[int, str]]:
    """(first line, token type) of each top-level block of `text`, as Rich's parser sees it."""
    return [
        (token.map[0], token.type)
        for token in _parser().parse(text)
        if token.level == 0 and token.nesting >= 0 and token.map is not None
    ]


def block_starts(text: str) -> list[int]:
    """Line numbers where the top-level blocks of `text` start."""
    return [line for line, _ in top_blocks(text)]


def opens_block(text: str, complete: int) -> bool:
    """Whether the block scan may read the line still being written (from `complete` on)
    as it stands. It may if the line follows a blank line: after one, only an indented line
    or the next list item continues a block, and the parser already sees the indentation and
    the list marker; only a bare number may still become the next item of an ordered list.
    Replies put a paragraph on one long line: without this the block before it would stay
    live, re-rendered every frame, until that whole paragraph had arrived."""
    line = text[complete:]
    if not line or line.isdigit() or complete == 0:
        return False
    return not text[: complete - 1].rpartition("\n")[2].strip()


def stand_in(token_type: str) -> str:
    """A one-line block that leaves Rich in the state a top-level block of this type does:
    asking for a blank line before the next block, or (after a rule) not."""
    from rich.markdown import Markdown, UnknownElement

    element = Markdown.elements.get(token_type) or UnknownElement
    return STAND_INS[0] if element.new_line else STAND_INS[1]


def _line_offset(text: str, line: int) -> int:
    """Character offset of line number `line` (0-based) in `text`."""
    offset = 0
    for _ in range(line):
        offset = text.index("\n", offset) + 1
    return offset


@lru_cache(maxsize=1)
def _blank_markdown() -> Markdown:
    from rich.markdown import Markdown

    return Markdown("", code_theme=CODE_THEME)


def markdown(text: str) -> RenderableType:
    """Rich's Markdown of `text`, parsed by the one shared parser: Rich builds a new parser
    for every instance, which costs more than parsing a short block (a test pins that the
    two agree)."""
    rendered = copy.copy(_blank_markdown())
    rendered.markup = text
    rendered.parsed = _parser().parse(text)
    return rendered


def live_text(tail: str, rows: int) -> str:
    """What the live area renders of a tail that is not one fence (see live_fence) but starts
    with one: a fence longer than the screen is cut to its opening line and last `rows` lines
    (only its end is visible anyway)."""
    lines = tail.split("\n")
    if len(lines) <= rows + 1 or not FENCE.match(lines[0]):
        return tail
    return "\n".join([lines[0], *lines[-rows:]])


class LiveTail:
    """The live tail as a renderable that renders once per width: live areas draw it again
    on every print into the scrollback and on every tick of their own."""

    __slots__ = ("_fence", "_lines", "_text", "_width")

    def __init__(self, text: str, fence: FencePreview | None = None) -> None:
        self._text = text
        self._fence = FencePreview(CODE_THEME) if fence is None else fence
        self._width = -1
        self._lines: list[list[Segment]] = []

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[SegmentLines]:
        if options.max_width != self._width:
            self._lines = self._render(console, options)
            self._width = options.max_width
        yield SegmentLines(self._lines, new_lines=True)

    def _render(self, console: Console, options: ConsoleOptions) -> list[list[Segment]]:
        rows = max(1, options.size.height - 3)
        fence = split_fence(self._text)
        if fence is not None and fence[1]:
            opening, code = fence
            return self._fence.lines(console, options, opening, code[-rows:])
        text = markdown(live_text(self._text, rows))
        return console.render_lines(text, options, pad=False)


class MarkdownStream:
    """Feed it the reply with `update(full_text)` or `append(delta)`, then `finish()`."""

    def __init__(
        self,
        console: Console,
        *,
        clock: Callable[[], float] = time.monotonic,
        live: LiveArea | None = None,
        fps: float = 12.0,
        schedule: Schedule = loop_schedule,
    ) -> None:
        self._console = console
        self._clock = clock
        self._live = default_live(console) if live is None else live
        self._interval = 1.0 / fps
        self._schedule = schedule
        self._seen = 0
        self._tail = ""
        self._scanned = 0
        self._last_refresh: float | None = None
        self._dirty = False
        """The tail changed since it was last drawn."""
        self._timer = False
        """A timer is set to draw when the throttle window closes."""
        self._context = ""
        """Rendered before the next chunk and its lines dropped (see the module doc)."""
        self._context_lines = 0
        self._counts: dict[str, int] = {}
        self._fence = FencePreview(CODE_THEME)
        _blank_markdown()  # loads Rich's Markdown now, not inside the first frame

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
        self._dirty = True
        self._refresh()

    def finish(self) -> None:
        """Print whatever is left; the live area is cleared and a pending timer does nothing."""
        self._dirty = False
        self._live.show(None)
        self._commit(len(self._tail))

    def _refresh(self) -> None:
        """Draw now if the throttle window has closed, else make sure a timer will."""
        now = self._clock()
        if self._last_refresh is not None:
            wait = self._last_refresh + self._interval - now
            if wait > 0:
                if not self._timer:
                    self._timer = True
                    self._schedule(wait, self._on_timer)
                return
        self._last_refresh = now
        self._dirty = False
        self._commit(self._finished_length())
        self._live.show(LiveTail(self._tail, self._fence) if self._tail.strip() else None)

    def _on_timer(self) -> None:
        self._timer = False
        if self._dirty:
            self._refresh()

    def _finished_length(self) -> int:
        """How much of the tail is made of finished blocks (0 if none)."""
        complete = self._tail.rfind("\n") + 1
        scan = len(self._tail) if opens_block(self._tail, complete) else complete
        if scan == self._scanned:
            return 0
        self._scanned = scan
        starts = block_starts(self._tail[:scan])
        if len(starts) < 2:
            return 0
        return _line_offset(self._tail, starts[-1])

    def _commit(self, length: int) -> None:
        """Print the first `length` characters of the tail (whole blocks) to the scrollback."""
        if length == 0:
            return
        chunk, self._tail = self._tail[:length], self._tail[length:]
        self._scanned = max(0, self._scanned - length)
        blocks = top_blocks(chunk)
        if not blocks:
            return
        lines = self._render_lines(self._context + chunk)[self._context_lines :]
        if lines:
            self._console.print(SegmentLines(lines, new_lines=True))
        last_line, last_type = blocks[-1]
        last = chunk[_line_offset(chunk, last_line) :]
        self._context = last if "]:" in last else stand_in(last_type)
        self._context_lines = self._line_count(self._context)

    def _line_count(self, text: str) -> int:
        """Rendered lines of `text`; the two stand-ins are counted once."""
        count = self._counts.get(text)
        if count is None:
            count = len(self._render_lines(text))
            if text in STAND_INS:
                self._counts[text] = count
        return count

    def _render_lines(self, text: str) -> list[list[Segment]]:
        segments = self._console.render(markdown(text), self._console.options)
        return list(Segment.split_lines(segments))
