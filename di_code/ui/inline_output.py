"""The chat's terminal output: prompt-toolkit's, except how it erases its own drawing.

Every erase_down prompt-toolkit writes erases its drawing from what it takes for the top-left
corner (an erase before printing above the prompt or for a resize, a redraw from scratch; the
chat never leaves a drawing on screen when done): after a narrowing the drawing starts higher,
by the rows the rewrap added (see reflow), and the erase goes up to there first.

prompt-toolkit erases the rows it drew (before printing above them, and on a resize) by moving
to the drawing's first row and clearing to the end of the screen. When that row is the top of
the screen, tmux (its `scroll-on-clear`, on by default) takes this for the `clear` command and
copies the screen into its history first: the old drawing (a tool panel, a line of the reply)
stays in the scrollback for good. It happens whenever the drawing starts at the top: after a
narrower window rewrapped it (see reflow), or with a live area as tall as the screen. Clearing
the first row on its own and the rest from the row below erases the same cells, and is never
taken for a `clear`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from prompt_toolkit.output import Output

    from di_code.ui.reflow import Reflow

ERASE_DOWN = "\x1b7\x1b[K\x1b[B\r\x1b[J\x1b8"
"""Save the cursor, clear to the end of this row, then from the start of the next row to the
end of the screen, and go back. (prompt-toolkit erases down from the first column; on the
last row the second clear is of the same row.)"""


def inline_output(reflow: Reflow) -> Output | None:
    """The output for the chat's prompt on a VT100 terminal, whose erases reach the rows
    `reflow` says a narrowing added; None (prompt-toolkit's own choice) when stdout is not
    one."""
    from prompt_toolkit.output import ColorDepth
    from prompt_toolkit.output.vt100 import Vt100_Output
    from prompt_toolkit.utils import get_bell_environment_variable, get_term_environment_variable

    class InlineOutput(Vt100_Output):
        reflow: Reflow

        def erase_down(self) -> None:
            added = self.reflow.erased(self.get_size().columns)
            if added:
                self.cursor_up(added)
            self.write_raw(ERASE_DOWN)

    if sys.platform == "win32" or not sys.stdout.isatty():
        return None
    output = cast(
        InlineOutput,
        InlineOutput.from_pty(
            sys.stdout,
            term=get_term_environment_variable(),
            default_color_depth=ColorDepth.from_env(),
            enable_bell=get_bell_environment_variable(),
        ),
    )  # from_pty makes an InlineOutput, typed as its base
    output.reflow = reflow
    return output


def drawn_on(app: Application[Any]) -> None:
    """Every drawing `app` makes is measured by the reflow of its output when that is the
    chat's: the prompt, and a list picked from between two prompts, which draws on the same
    terminal (its erases meet the same rewrap)."""
    reflow: Reflow | None = getattr(app.output, "reflow", None)
    if reflow is not None:
        app.after_render += reflow.after_render
