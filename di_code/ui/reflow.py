"""A terminal narrowed while the prompt is drawn rewraps the rows already on screen (tmux and
most terminals do): prompt-toolkit then erases as many rows as it drew, and the top of its old
drawing (a line of the streaming reply, half a tool panel) stays behind. So every erase of the
drawing after a narrowing starts higher, by the rows the rewrap added.

Every erase, not only the one before a redraw: text printed above the prompt (a finished
paragraph of the reply) is printed where the erase left the cursor, and the terminal can be
narrower by then while prompt-toolkit has not handled the resize yet (its SIGWINCH waits for
the event loop, which is busy or not scheduled). An erase that missed the rewrapped rows then
printed the paragraph under the half line it left, and the correction made before the next
redraw erased the end of that paragraph instead.

What is measured is what reached the terminal (the renderer's screens, never the prompt's
message: each row up to the last cell the renderer writes, a space too when its style shows, as
a code block's background does), and for each row the widest it has been since the drawing was
last erased: a row drawn again narrower is cleared from its new end only (prompt-toolkit's
diff), and tmux rewraps a row by the widest it held until it is cleared from its first column.
That is also what a resize during a render leaves: the renderer read the old width, the message
(the live panel) the new one, and the drawing of rows no wider than the new width went over the
old drawing's rows, rewrapped already, which the erase when the narrowing is handled must
reach.

How many rows a row became is counted as tmux cuts it: a double-width character that does
not fit in a row's last column starts the next row (at an odd width, a row of them makes more
rows than its width divided by the terminal's).

The cursor's own row counts too: tmux moves the cursor with its cell (to the last of the
rows a row became when it is at or past the row's end, as at the end of a long message typed
in the prompt), and the erase goes up from there. Any prompt-toolkit application drawn on the
chat's output (the prompt, a list picked from between two prompts) is measured: see
inline_output.drawn_on.

tmux keeps the cursor's row when it rewraps, so rows that no longer fit above it go into its
history, out of reach of any cursor movement: those stay in the scrollback (the screen is
clean). A terminal that cuts rows instead of rewrapping them loses as many rows of the output
above the prompt from the screen.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from itertools import zip_longest
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from prompt_toolkit.layout.screen import Screen


class Reflow:
    """The widest each row of the prompt's drawing has been since it was last erased."""

    def __init__(self) -> None:
        self._rows: list[Cells] = []
        self._cursor = (0, 0)  # column, row

    def after_render(self, app: Application[Any]) -> None:
        """Remember the rows just drawn, over those drawn before."""
        screen = app.renderer.last_rendered_screen
        if screen is None:
            self._rows = []
            return
        cursor = screen.get_cursor_position(app.layout.current_window)
        self._cursor = (cursor.x, cursor.y)
        styled = styled_in(app)
        drawn = [used_cells(screen, row, styled) for row in range(screen.height)]
        self._rows = [widest(*pair) for pair in zip_longest(self._rows, drawn, fillvalue=())]

    def erased(self, columns: int) -> int:
        """The drawing is being erased at a terminal `columns` wide: how many rows its rewrap
        added above the cursor (a row wider than the terminal now is became more rows; rows
        drawn at a width are never wider than it, so without a narrowing there are none).
        Erased, it has no rows left to miss until the next drawing."""
        rows, self._rows = self._rows, []
        if columns <= 0:
            return 0
        column, row = self._cursor
        above = sum(rewrapped_row(cells, columns, sum(cells)) for cells in rows[:row])
        if row < len(rows):  # tmux put the cursor on the row its cell went to
            above += rewrapped_row(rows[row], columns, column)
        return above


Cells = tuple[int, ...]
"""The widths of a drawn row's cells (2 for a double-width character), up to its end."""


def used_cells(screen: Screen, row: int, styled: Callable[[str], bool]) -> Cells:
    """A drawn row's cells up to the last one the renderer wrote (a gap counts 1 a cell): a
    visible character, or a space with a style that shows (a code block's background, which
    reaches the terminal's last column)."""
    drawn = screen.data_buffer[row]
    end, wide = 0, False
    for x, char in drawn.items():
        wide = wide or char.width == 2
        if char.char != " " or styled(char.style):
            end = max(end, x + char.width)
    if not wide:
        return (1,) * end
    cells: list[int] = []
    x = 0
    while x < end:
        at = drawn.get(x)
        cells.append(2 if at is not None and at.width == 2 else 1)
        x += cells[-1]
    return tuple(cells)


def styled_in(app: Application[Any]) -> Callable[[str], bool]:
    """Whether a space of a style shows, so prompt-toolkit's renderer writes it (a colour, a
    background, a line through or under it, reversed or blinking)."""

    @cache
    def styled(style: str) -> bool:
        attrs = app.renderer.style.get_attrs_for_style_str(style)
        attrs = app.style_transformation.transform_attrs(attrs)
        shows = (attrs.color, attrs.bgcolor, attrs.underline, attrs.strike, attrs.blink)
        return any(shows) or bool(attrs.reverse)

    return styled


def widest(before: Cells, drawn: Cells) -> Cells:
    """What a row holds once `drawn` over `before`: a narrower drawing clears the rest of the
    row from its end, and tmux keeps those cleared cells in the row's width."""
    missing = sum(before) - sum(drawn)
    return drawn + (1,) * missing if missing > 0 else drawn


def rewrapped_row(cells: Cells, columns: int, column: int) -> int:
    """Which of the rows tmux makes of `cells` at `columns` holds the cell at `column` (the
    last of them for a column at or past the end): a character that does not fit in what is
    left of a row starts the next."""
    row = used = x = 0
    for width in cells:
        if used and used + width > columns:
            row, used = row + 1, 0
        if column < x + width:
            return row
        used, x = used + width, x + width
    return row
