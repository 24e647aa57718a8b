"""Keys pressed while chat writes to the terminal are the prompt's keys.

prompt-toolkit writes text above a running prompt with the terminal handed back for the
write (`run_in_terminal`): it had put it in cooked mode, where the terminal reads the special
keys itself. A Ctrl-D that came then was the terminal's end of input, read by the prompt
afterwards as a NUL byte: chat went on as if no key had come (the hostile Ctrl-D test hung so,
once in CI, when its Ctrl-D came right after the answer it waited for). The write is made to
block here (nobody reads the terminal while a long answer is written), the key comes while it
blocks, then the terminal is read again.
"""

from __future__ import annotations

import termios
from pathlib import Path

import pytest

from tests.support.chat import DI_CODE, ended_within, spawn_chat
from tests.support.llm_server import LLMServer, Turn
from tests.support.processes import blocked_writing, wait_until
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")

EXIT_BOUND = 10.0
"""Seconds from the drained terminal to chat's end: it hangs without the fix."""

LONG = "\n".join(f"line {n} of an answer longer than a terminal's buffer" for n in range(3000))


def test_ctrl_d_pressed_while_chat_writes_an_answer_ends_the_chat(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(Turn(text=LONG, chunk_size=4096))
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        screen.wait_for("›")
        child.sendline("go")
        wait_until(lambda: blocked_writing(child.pid, 1), "chat blocked writing the answer")
        cooked = bool(termios.tcgetattr(child.child_fd)[3] & termios.ICANON)
        child.sendeof()
        ended_within(child, EXIT_BOUND, f"Ctrl-D (the terminal in cooked mode: {cooked})", screen)
        child.close()
        assert child.exitstatus == 0
    finally:
        child.close(force=True)
