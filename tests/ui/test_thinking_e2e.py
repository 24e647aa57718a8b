"""Ctrl-T in `di-code chat` in a real pseudo-terminal: the folded block's own hint ("Ctrl-T
shows thinking whole") holds for the block it is under, shown whole at once, not only for the
blocks that come later."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.chat import DI_CODE, open_chat, quit_chat
from tests.support.llm_server import LLMServer, Turn

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")

STEPS = "\n".join(f"step {n} of the plan" for n in range(1, 9))


def test_ctrl_t_shows_the_last_folded_block_whole_at_once(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(Turn(thinking=STEPS, text="Planned."))
    child, screen = open_chat(llm_server, tmp_path)
    try:
        child.sendline("plan it")
        screen.wait_for("Ctrl-T shows thinking whole")
        screen.wait_for("Planned.")
        assert not any("step 8 of the plan" in line for line in screen.lines)
        child.send("\x14")
        lines = screen.wait_for("step 8 of the plan")
        assert any("Thinking is shown whole" in line for line in lines)
        child.send("\x14")  # folded again, then whole again: the block is not shown twice
        screen.wait_for("Thinking is folded")
        child.send("\x14")
        lines = screen.pump(1.0)
        assert sum("step 8 of the plan" in line for line in lines) == 1
        quit_chat(child)
    finally:
        child.close(force=True)
