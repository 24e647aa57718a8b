"""The chat's terminal input: prompt-toolkit's, except that writing above the prompt leaves the
terminal in raw mode.

prompt-toolkit writes text above a running prompt with the prompt suspended (`run_in_terminal`,
through di_code.ui.scrollback), and suspends it as it would for a program that reads the terminal:
the terminal goes back to cooked mode for the write. A write needs no such thing, and the
keys typed during it were lost to it: in cooked mode the terminal reads the special keys
itself, so a Ctrl-D pressed while a long answer was written (or while a slow terminal took it
in) was the terminal's end of input, which the prompt then read as a NUL byte; Ctrl-C was a
SIGINT, Ctrl-Z stopped di-code, and typed text was echoed into the answer. In raw mode the
keys typed meanwhile wait in the terminal's queue as they are, for the prompt. The one
program chat runs in the terminal, the pager, sets the modes it needs (less does).
"""

from __future__ import annotations

import contextlib
import sys
from contextlib import AbstractContextManager

from prompt_toolkit.input import Input
from prompt_toolkit.input.vt100 import Vt100Input


class RawInput(Vt100Input):
    def cooked_mode(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()


def raw_input() -> Input | None:
    """The input for the chat's prompt on a terminal; None (prompt-toolkit's own choice) when
    stdin is not one."""
    if sys.platform == "win32" or not sys.stdin.isatty():
        return None
    return RawInput(sys.stdin)
