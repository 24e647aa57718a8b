"""Prompts drawn as the chat draws its own (its output, its reflow) that meet a narrowing of
the terminal in the order a loaded machine makes, every run. Run in a terminal 100 columns
wide (`python -m tests.support.narrowed_prompt [--drawing READY]`); each ends on Enter.

The print (no argument): a line of the reply wider than 60 columns is above the prompt, and
is printed above it, as the chat prints a finished paragraph, once the terminal is narrower
but before it has handled the narrowing: the terminal has rewrapped the rows and answers the
new size, while the SIGWINCH waits behind the event loop. Here it waits for good (it is
blocked before any thread starts, and prompt-toolkit's own polling of the size is off), so
the print's erase is the first to meet the rewrapped rows. It draws `printed` in the prompt
once the line is printed.

The drawing (`--drawing READY`): a tool panel as wide as the terminal is drawn, and drawn
again (as the chat does for every line of a running tool's output); the terminal narrows
during that second drawing, after the renderer read its width and before the panel is laid
out (the chat's message reads the size again): a drawing at the old width of a panel at the
new one, over the rewrapped first. The file READY is made once the renderer read the width,
for the terminal to be narrowed then. It draws `redrawn` in the prompt once it has handled
the narrowing.

Lines printed before either keep the prompt off the top of the screen: what a rewrap pushes
above the top goes into the terminal's history, out of reach.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.formatted_text import AnyFormattedText

LINE = "Paragraph 3 says something fairly long, so that sixty columns must wrap it in two."
PRINTED = "printed"
REDRAWN = "redrawn"
ABOVE = ("di-code chat", "/help for commands", "› go")
PANEL_LINES = tuple(f"line {n}" for n in range(1, 6))


def chat_like_session(message: AnyFormattedText) -> PromptSession[str]:
    """A prompt with the chat's output and reflow, under the lines the chat printed."""
    from prompt_toolkit import PromptSession

    from di_code.ui.inline_output import drawn_on, inline_output
    from di_code.ui.reflow import Reflow

    session: PromptSession[str] = PromptSession(
        message, output=inline_output(Reflow()), erase_when_done=True
    )
    drawn_on(session.app)
    print("\n".join(ABOVE))
    return session


async def printed_before_the_narrowing_is_handled() -> None:
    from prompt_toolkit.patch_stdout import patch_stdout

    live = [LINE]
    session = chat_like_session(lambda: f"{live[0]}\n› ")
    session.app.terminal_size_polling_interval = None
    with patch_stdout(raw=True):
        prompt = asyncio.ensure_future(session.prompt_async())
        columns = os.get_terminal_size().columns
        while os.get_terminal_size().columns >= columns:
            await asyncio.sleep(0.02)
        live[0] = PRINTED
        print(LINE)  # drawn again, with the new message, once printed
        await prompt


async def narrowed_during_a_drawing(ready: Path) -> None:
    from prompt_toolkit.application import get_app
    from prompt_toolkit.formatted_text import ANSI
    from rich.console import Console
    from rich.panel import Panel

    from di_code.ui.prompt_live import PromptLive

    print("\n" * 8, end="")  # room above for the panel's rewrapped rows
    live = PromptLive(Console(force_terminal=True))
    live.current = Panel("\n".join(PANEL_LINES), title="bash")
    columns = os.get_terminal_size().columns
    narrowed_at: list[int] = []  # the render the terminal narrowed in

    def message() -> ANSI:
        app = get_app()
        if drawn.is_set() and not narrowed_at:
            ready.touch()
            while os.get_terminal_size().columns >= columns:
                time.sleep(0.02)
            narrowed_at.append(app.render_counter)
        size = app.output.get_size()  # as the chat's prompt_message reads it
        handled = narrowed_at and app.render_counter > narrowed_at[0]
        return ANSI(f"{live.render(size.columns, size.rows)}{REDRAWN if handled else ''}› ")

    drawn = asyncio.Event()
    session = chat_like_session(message)
    session.app.after_render += lambda app: drawn.set()
    prompt = asyncio.ensure_future(session.prompt_async())
    await drawn.wait()
    session.app.invalidate()  # the second drawing, as for a new line of the tool's output
    await prompt


if __name__ == "__main__":
    if sys.argv[1:2] == ["--drawing"]:
        asyncio.run(narrowed_during_a_drawing(Path(sys.argv[2])))
    else:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGWINCH})
        asyncio.run(printed_before_the_narrowing_is_handled())
