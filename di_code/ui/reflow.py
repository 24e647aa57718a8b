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
message), and for each row the widest it has been since the drawing was last erased: a row
drawn again narrower is cleared from its new end only (prompt-toolkit's diff), and tmux
rewraps a row by the widest it held until it is cleared from its first column. That is also
what a resize during a render leaves: the renderer read the old width, the message (the live
panel) the new one, and the drawing of rows no wider than the new width went over the old
drawing's rows, rewrapped already, which the erase when the narrowing is handled must reach.

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

from itertools import zip_longest
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from prompt_toolkit.layout.screen import Screen


class Reflow:
    """The widest each row of the prompt's drawing has been since it was last erased."""

    def __init__(self) -> None:
        self._widths: list[int] = []
        self._cursor = (0, 0)  # column, row

    def after_render(self, app: Application[Any]) -> None:
        """Remember the rows just drawn, over those drawn before."""
        screen = app.renderer.last_rendered_screen
        if screen is None:
            self._widths = []
            return
        cursor = screen.get_cursor_position(app.layout.current_window)
        self._cursor = (cursor.x, cursor.y)
        drawn = [used_width(screen, row) for row in range(screen.height)]
        self._widths = [max(pair) for pair in zip_longest(self._widths, drawn, fillvalue=0)]

    def erased(self, columns: int) -> int:
        """The drawing is being erased at a terminal `columns` wide: how many rows its rewrap
        added above the cursor (a row wider than the terminal now is became more rows; rows
        drawn at a width are never wider than it, so without a narrowing there are none).
        Erased, it has no rows left to miss until the next drawing."""
        widths, self._widths = self._widths, []
        if columns <= 0:
            return 0
        column, row = self._cursor
        above = sum(max(0, -(-width // columns) - 1) for width in widths[:row])
        cursor_row = widths[row] if row < len(widths) else 0
        if cursor_row:  # tmux put the cursor on the row its cell went to
            above += min(column, cursor_row - 1) // columns
        return above


def used_width(screen: Screen, row: int) -> int:
    """How many cells of a drawn row were written up to its last visible character."""
    cells = screen.data_buffer[row]
    return max((x + char.width for x, char in cells.items() if char.char.strip()), default=0)
