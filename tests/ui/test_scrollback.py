"""What the chat prints reaches the terminal in order with the prompt (di_code.ui.scrollback):
in process, the REPL on a recording terminal whose writes from any thread but the event
loop's come late, as on a loaded machine where such a thread is not scheduled at once."""

from __future__ import annotations

import asyncio
import io
import sys
import threading
import time

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

from di_code.agent import Agent
from di_code.ai.providers.faux import create_faux_provider
from di_code.setup.prepared import Prepared
from di_code.ui.repl import Repl
from di_code.ui.scrollback import LONGEST_PARTIAL, Scrollback
from tests.support.repl import TIMEOUT, until

LATE = 0.3


class LateTerminal(io.StringIO):
    """What was written, in order; a write off the loop's thread waits LATE seconds first."""

    def __init__(self) -> None:
        super().__init__()
        self.loop_thread = threading.get_ident()
        self.lock = threading.Lock()

    def write(self, text: str) -> int:
        if threading.get_ident() != self.loop_thread:
            time.sleep(LATE)
        with self.lock:
            return super().write(text)

    def isatty(self) -> bool:
        return False


async def test_a_line_printed_between_two_prompts_is_on_the_terminal_before_the_next_prompt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    terminal = LateTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    output = Vt100_Output(terminal, lambda: Size(rows=30, columns=100), enable_cpr=False)
    faux = create_faux_provider([])
    with create_pipe_input() as keys, create_app_session(keys, output):
        setup = Prepared(Agent(faux.provider, faux.model))
        repl = Repl(setup, Console(), input=keys, output=output)
        chat = asyncio.create_task(repl.run())
        await until(lambda: "›" in terminal.getvalue())
        keys.send_text("/model\r")
        await until(lambda: "Model: faux/faux-1" in terminal.getvalue())
        await asyncio.sleep(LATE * 2)  # what the late thread had would be written by now
        after = terminal.getvalue().rpartition("Model: faux/faux-1")[2]
        keys.send_text("/exit\r")
        assert await asyncio.wait_for(chat, TIMEOUT) == 0
    assert "›" in after, "the prompt was drawn before the line and never again"


async def test_a_line_that_never_ends_is_printed_once_it_is_long_not_kept_for_ever() -> None:
    """A progress line redrawn with \\r and never ended waits for its newline only up to
    LONGEST_PARTIAL characters: then it is ended and printed, in one piece."""
    terminal = io.StringIO()
    scrollback = Scrollback(terminal, asyncio.get_running_loop())
    piece = "\r" + "x" * 1023
    for _ in range(LONGEST_PARTIAL // len(piece)):
        scrollback.write(piece)
    assert terminal.getvalue() == ""
    scrollback.write(piece)
    assert terminal.getvalue() == piece * (LONGEST_PARTIAL // len(piece) + 1) + "\n"
    scrollback.write("next\n")
    assert terminal.getvalue().endswith("x\nnext\n")
