"""The live area of the REPL, drawn inside the prompt-toolkit prompt, above the input line.

While the agent runs the prompt stays open (typing queues a steering message), so nothing
may move the cursor behind prompt-toolkit's back: finished output is printed into the
scrollback (di_code.ui.scrollback), and what is still changing is rendered here, as part of
the prompt's message, and redrawn with it.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console, RenderableType

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import AnyFormattedText

    from di_code.ui.approval import ReplApprover

MIN_ROWS_LEFT = 4


class PromptLive:
    """A LiveArea whose content the prompt's message shows; `invalidate` asks for a redraw."""

    def __init__(self, console: Console, invalidate: Callable[[], None] = lambda: None) -> None:
        self.current: RenderableType | None = None
        self.invalidate = invalidate
        self._capture = Console(
            file=io.StringIO(),
            force_terminal=console.is_terminal,
            color_system=console.color_system,  # type: ignore[arg-type]
            no_color=console.no_color,
            width=console.width,
        )

    def show(self, renderable: RenderableType | None) -> None:
        self.current = renderable
        self.invalidate()

    def render(self, width: int, rows: int) -> str:
        """The live content as ANSI text, at most `rows - MIN_ROWS_LEFT` lines (the last ones)."""
        if self.current is None:
            return ""
        capture = self._capture
        capture.width = max(20, width)
        with capture.capture() as captured:
            capture.print(self.current)
        lines = captured.get().splitlines()
        if not lines:
            return ""
        keep = max(1, rows - MIN_ROWS_LEFT)
        return "\n".join(lines[-keep:]) + "\n"


def prompt_message(approver: ReplApprover, live: PromptLive, busy: bool) -> AnyFormattedText:
    """The prompt's message: an open question, else the live area (and `…` while busy)."""
    from prompt_toolkit.application import get_app
    from prompt_toolkit.formatted_text import ANSI

    from di_code.ui.approval import fold

    app = get_app()
    size = app.output.get_size()
    if approver.pending is not None:
        # The running call's panel would say "running" while it waits for the answer.
        asking = fold(approver.prompt_line(app.current_buffer.text), size.columns)
        message = f"\x1b[1;33m{asking}\x1b[0m\n\x1b[1;36m›\x1b[0m "
    else:
        symbol = "\x1b[2m…\x1b[0m " if busy else ""
        message = f"{live.render(size.columns, size.rows)}{symbol}\x1b[1;36m›\x1b[0m "
    return ANSI(message)
