"""`/tree`'s chooser: the session's branches drawn as a tree in the chat's live area (above
the input line, as a running tool is), ↑/↓ (PgUp/PgDn, Home/End) moving over the branches
one can go on from, Enter choosing, Esc or Ctrl-C leaving everything as it was (they stop the
busy task, as for any question); other keys are dropped.

Every row is one line cut to the screen's width, through the sanitizer; only the rows around
the cursor are drawn, and a tree deeper than GUIDE_LEVELS draws only its last levels, so a
hostile file of 100,000 branches costs no more to draw than a short one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from rich.text import Text

from di_code.system.safe_text import visible
from di_code.ui.prompt_live import MIN_ROWS_LEFT

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyBindings
    from rich.console import Console, ConsoleOptions, RenderableType

    from di_code.session.branches import Branch
    from di_code.system.abort import AbortSignal

GUIDE_LEVELS = 8
"""Tree levels drawn with guide lines; a deeper branch starts with DEEPER and its last ones."""
DEEPER = "⋯ "
CURSOR, CURRENT = "❯ ", "  ← current"
HEADER = "Branches: ↑↓ move · Enter goes on from the branch · Esc leaves it as it is"


def branch_label(branch: Branch) -> Text:
    """What a row says of a branch: its first prompt, when, how much is on it."""
    title = visible(branch.title.replace("\t", " "))
    when = time.strftime("%m-%d %H:%M", time.localtime(branch.timestamp / 1000))
    prompts = f"{branch.prompts} prompt{'' if branch.prompts == 1 else 's'}"
    turns = f"{branch.turns} turn{'' if branch.turns == 1 else 's'}"
    label = Text(title) if title else Text("(no prompt yet)", style="italic")
    label.append(f" · {when} · {prompts}, {turns}", style="dim")
    return label


def guides(branches: list[Branch], index: int) -> str:
    """The tree's lines left of a row: a guide for each level above it, its own branch mark."""
    branch = branches[index]
    if branch.depth == 0:
        return ""
    parts = ["└─ " if branch.last else "├─ "]
    above = branch.parent
    while above is not None and branches[above].depth > 0 and len(parts) < GUIDE_LEVELS:
        parts.append("   " if branches[above].last else "│  ")
        above = branches[above].parent
    deeper = DEEPER if above is not None and branches[above].depth > 0 else ""
    return deeper + "".join(reversed(parts))


class TreeChooser:
    """The open chooser (at most one), drawn by `show` (the live area) while it waits."""

    def __init__(
        self, show: Callable[[RenderableType | None], None], screen_rows: Callable[[], int]
    ) -> None:
        self._show = show
        self._screen_rows = screen_rows
        self._branches: list[Branch] = []
        self._choosable: list[int] = []
        """The rows one can go on from (branches that end), by index in `_branches`."""
        self._at = 0
        """The cursor: a position in `_choosable`."""
        self._top = 0
        self._answer: asyncio.Future[Branch] | None = None

    @property
    def open(self) -> bool:
        return self._answer is not None

    async def choose(self, branches: list[Branch], signal: AbortSignal) -> Branch | None:
        """The branch the user chose with Enter; None when `signal` stops it (Esc, Ctrl-C)."""
        self._branches = branches
        self._choosable = [i for i, branch in enumerate(branches) if branch.ends]
        current = [n for n, i in enumerate(self._choosable) if branches[i].current]
        self._at, self._top = (current or [0])[0], 0
        answer = self._answer = asyncio.get_running_loop().create_future()
        stop = asyncio.ensure_future(signal.wait())
        self._show(self)
        try:
            await asyncio.wait([answer, stop], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            self._answer, self._branches, self._choosable = None, [], []
            self._show(None)
        return answer.result() if answer.done() else None

    def move(self, rows: int) -> None:
        """The cursor `rows` branches down (up when negative), stopping at either end."""
        self._at = max(0, min(len(self._choosable) - 1, self._at + rows))
        self._show(self)

    def page(self) -> int:
        """How many rows of branches the screen has room for."""
        return max(1, self._screen_rows() - MIN_ROWS_LEFT - 2)

    def pick(self) -> None:
        if self._answer is not None and not self._answer.done() and self._choosable:
            self._answer.set_result(self._branches[self._choosable[self._at]])

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        yield Text(HEADER, style="bold yellow", no_wrap=True, overflow="ellipsis")
        if not self._choosable:
            return
        cursor, rows = self._choosable[self._at], self.page()
        self._top = min(max(self._top, cursor - rows + 1), cursor)
        shown = range(self._top, min(len(self._branches), self._top + rows))
        for index in shown:
            yield self._row(index, index == cursor, options.max_width)
        if len(shown) < len(self._branches):
            where = f"  rows {shown.start + 1}-{shown.stop} of {len(self._branches)}"
            yield Text(where, style="dim", no_wrap=True)

    def _row(self, index: int, at_cursor: bool, width: int) -> Text:
        branch = self._branches[index]
        row = Text(CURSOR if at_cursor else "  ", style="bold cyan")
        row.append(guides(self._branches, index), style="dim")
        label = branch_label(branch)
        if not branch.ends:
            label.stylize("dim")
        row.append_text(label)
        if branch.current:
            row.append(CURRENT, style="bold green")
        if at_cursor:
            row.stylize("reverse", len(CURSOR))
        row.truncate(width, overflow="ellipsis")
        row.no_wrap = True
        return row

    def key_bindings(self) -> KeyBindings:
        """↑/↓, PgUp/PgDn, Home/End and Enter while the chooser is open (Esc is the chat's
        stop key: it ends the busy task, the chooser with it)."""
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
        from prompt_toolkit.keys import Keys

        bindings = KeyBindings()
        is_open = Condition(lambda: self.open)
        moves = {"up": -1, "down": 1, "c-p": -1, "c-n": 1, "home": -(1 << 30), "end": 1 << 30}
        for key, rows in moves.items():
            bindings.add(key, filter=is_open)(lambda event, rows=rows: self.move(rows))
        bindings.add("pageup", filter=is_open)(lambda event: self.move(-self.page()))
        bindings.add("pagedown", filter=is_open)(lambda event: self.move(self.page()))

        @bindings.add("enter", filter=is_open)
        def _pick(event: KeyPressEvent) -> None:
            self.pick()

        # any other key typed at the list is dropped, not left in the input as a prompt
        # (prompt-toolkit prefers a binding of the key itself: Esc, Ctrl-C still count)
        bindings.add(Keys.Any, filter=is_open)(lambda event: None)
        return bindings
