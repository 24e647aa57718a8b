"""How the model's thinking is drawn: while it streams, its last lines with their line
breaks; once done, folded to THINKING_LINES (Ctrl-T shows the last folded block whole at
once and every later block whole, and `/expand thinking [N]` shows a past one whole). Lines
are counted as drawn, wrapped at the panel's width, so a long paragraph cannot fill the
screen."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.text import Text

from di_code.system.safe_text import visible
from di_code.ui.tool_view import framed

THINKING_LINES = 3
"""A finished thinking block, folded."""
LIVE_LINES = 6
"""A streaming thinking block: its last lines."""
STYLE = "dim italic"


@dataclass(frozen=True, slots=True)
class _Wrapped:
    """`text` wrapped at the width it is drawn in, cut to its first or last `keep` lines."""

    text: str
    keep: int | None
    tail: bool = False

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = Text(self.text, style=STYLE).wrap(console, options.max_width)
        keep = self.keep
        if keep is None or len(lines) <= keep:
            yield from lines
            return
        if self.tail:
            earlier = len(lines) - keep
            yield Text(f"… {earlier} earlier line{'' if earlier == 1 else 's'}", style="dim")
            yield from lines[-keep:]
            return
        yield from lines[:keep]
        more = len(lines) - keep
        hint = "(Ctrl-T shows thinking whole)"
        yield Text(f"… {more} more line{'' if more == 1 else 's'} {hint}", style="dim")


def _title(label: str = "✻ thinking") -> Text:
    return Text(label, style=STYLE)


def thinking_live(thinking: str) -> RenderableType:
    """The block while it streams: its last lines, as the model broke them."""
    shown = visible(thinking.strip("\n"))
    return framed(_Wrapped(shown or "…", LIVE_LINES, tail=True), _title(), "dim")


def thinking_panel(thinking: str, *, whole: bool = False) -> RenderableType:
    """A finished block: folded, or `whole`."""
    shown = visible(thinking.strip())
    return framed(_Wrapped(shown or "…", None if whole else THINKING_LINES), _title(), "dim")


class Thoughts:
    """Every finished thinking block of the chat, for `/expand thinking [N]`."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self._last_folded = False

    def add(self, thinking: str, *, folded: bool) -> None:
        """A finished block, as it was printed (folded or whole)."""
        self.blocks.append(thinking)
        self._last_folded = folded

    def take_folded(self) -> bool:
        """Whether the last block was printed folded and not whole since (once)."""
        folded, self._last_folded = self._last_folded, False
        return folded

    def expanded(self, number: int | None = None) -> RenderableType:
        """The last (or the `number`th, from 1) thinking block, whole."""
        count = len(self.blocks)
        if not count:
            raise ValueError("No thinking to expand yet.")
        index = count if number is None else number
        if not 1 <= index <= count:
            raise ValueError(f"There are {count} thinking blocks: /expand thinking 1 to {count}.")
        shown = visible(self.blocks[index - 1].strip())
        return framed(_Wrapped(shown, None), _title(f"✻ thinking {index}"), "dim")
