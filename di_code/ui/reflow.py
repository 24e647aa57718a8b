"""A terminal narrowed while the prompt is drawn rewraps the rows already on screen (tmux and
most terminals do): prompt-toolkit then erases as many rows as it drew, and the top of its old
drawing (a line of the streaming reply, half a tool panel) stays behind. So before the first
drawing at a narrower width, the rows the rewrap added are erased too.

What is measured is what reached the terminal: the rows of the last drawing above its cursor
(the renderer's screen), never the prompt's message, which may already be laid out for the new
width while the old drawing is still on screen (a resize during a render).
tmux keeps the cursor's row when it rewraps, so rows that no longer fit above it go into its
history, out of reach of any cursor movement: those stay in the scrollback (the screen is
clean). A terminal that cuts rows instead of rewrapping them loses as many rows of the output
above the prompt from the screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from prompt_toolkit.layout.screen import Screen


class Reflow:
    """The used widths of the rows the prompt last drew above its cursor."""

    def __init__(self) -> None:
        self._widths: list[int] = []

    def after_render(self, app: Application[Any]) -> None:
        """Remember the rows just drawn."""
        screen = app.renderer.last_rendered_screen
        if screen is None:
            self._widths = []
            return
        cursor = screen.get_cursor_position(app.layout.current_window)
        self._widths = [used_width(screen, row) for row in range(cursor.y)]

    def before_render(self, app: Application[Any]) -> None:
        """After prompt-toolkit erased its old drawing for a resize, erase what it missed: a
        row wider than the terminal now is was rewrapped into more rows. (Rows drawn at a
        width are never wider than it: without a narrowing there is nothing to do.)"""
        columns = app.output.get_size().columns
        if columns <= 0:
            return
        added = sum(max(0, -(-width // columns) - 1) for width in self._widths)
        if added:
            app.output.cursor_up(added)
            app.output.erase_down()
        self._widths = []  # erased: until the next drawing, nothing more to erase


def used_width(screen: Screen, row: int) -> int:
    """How many cells of a drawn row were written up to its last visible character."""
    cells = screen.data_buffer[row]
    return max((x + char.width for x, char in cells.items() if char.char.strip()), default=0)
