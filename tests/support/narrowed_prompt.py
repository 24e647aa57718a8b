"""A prompt drawn as the chat draws its own (its output, its reflow), with a line of the reply
wider than 60 columns above it, that prints that line above the prompt, as the chat prints a
finished paragraph, once the terminal is narrower but before it has handled the narrowing.

That is the order a loaded machine makes: the terminal has rewrapped the rows and answers
the new size, while the SIGWINCH waits behind the event loop. Here it waits for good (it is
blocked before any thread starts, and prompt-toolkit's own polling of the size is off), so
the print's erase is the first to meet the rewrapped rows, every run. Run in a terminal
(`python -m tests.support.narrowed_prompt`); it draws `printed` in the prompt once the line
is printed, and ends on Enter. Lines printed before it keep the prompt off the top of the
screen: what a rewrap pushes above the top goes into the terminal's history, out of reach.
"""

from __future__ import annotations

import asyncio
import os
import signal

LINE = "Paragraph 3 says something fairly long, so that sixty columns must wrap it in two."
PRINTED = "printed"
ABOVE = ("di-code chat", "/help for commands", "› go")


async def main() -> None:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.patch_stdout import patch_stdout

    from di_code.ui.inline_output import inline_output
    from di_code.ui.reflow import Reflow

    live = [LINE]
    reflow = Reflow()
    session: PromptSession[str] = PromptSession(
        lambda: f"{live[0]}\n› ", output=inline_output(reflow), erase_when_done=True
    )
    session.app.after_render += reflow.after_render
    session.app.terminal_size_polling_interval = None
    print("\n".join(ABOVE))
    with patch_stdout(raw=True):
        prompt = asyncio.ensure_future(session.prompt_async())
        columns = os.get_terminal_size().columns
        while os.get_terminal_size().columns >= columns:
            await asyncio.sleep(0.02)
        live[0] = PRINTED
        print(LINE)  # drawn again, with the new message, once printed
        await prompt


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGWINCH})
    asyncio.run(main())
