"""A terminal narrowed while the prompt is drawn rewraps the rows already on screen (tmux and
most terminals do): prompt-toolkit then erases as many rows as it drew, and the top of its old
drawing (a line of the streaming reply) stays behind, to be printed again once final. So
before the first drawing at a narrower width, the rows the rewrap added are erased too. (A
terminal that cuts rows instead of rewrapping them, as xterm does, then loses as many rows of
the output above the prompt from the screen; every common terminal today rewraps.)"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len

if TYPE_CHECKING:
    from prompt_toolkit.application import Application

_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Reflow:
    """The widths of the rows the prompt last drew above its cursor, and at what width."""

    def __init__(self) -> None:
        self._columns = 0
        self._widths: list[int] = []

    def drawn(self, columns: int, message: str) -> None:
        """Called with each frame's message (ANSI text; the input line is its last line)."""
        self._columns = columns
        self._widths = [cell_len(_ESCAPE.sub("", line).rstrip()) for line in message.split("\n")]

    def before_render(self, app: Application[Any]) -> None:
        """After prompt-toolkit erased its old drawing for a resize, erase what it missed."""
        columns = app.output.get_size().columns
        if not 0 < columns < self._columns:
            return
        added = sum(max(0, -(-width // columns) - 1) for width in self._widths)
        if added:
            app.output.cursor_up(added)
            app.output.erase_down()
        self._columns = columns
