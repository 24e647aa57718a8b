"""The model's plan in a real chat (pty + pyte): one panel above the status line that changes
in place as the model updates it, printed once when the prompt ends (and gone from above the
prompt then), not a new panel per change; a resumed chat shows the plan as it was left; Ctrl-O
opens the last call whose output was shown, not the plan's todo call."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
import pytest

from tests.support.chat import DI_CODE, spawn_chat
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")

ROWS = 60
SETTLE = 1.0
"""Seconds of reading after the footer: the prompt redraws without the live area meanwhile."""
CTRL_O = "\x0f"


def todo(call_id: str, first: str, second: str) -> Turn:
    steps = [{"content": "look around", "status": first}, {"content": "fix it", "status": second}]
    return Turn(tool_calls=(ToolCallSpec("todo", {"todos": steps}, call_id),))


def tall(child: pexpect.spawn) -> Screen:
    screen = Screen(child, ROWS)
    return screen


def test_the_plan_changes_in_place_and_is_printed_once(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(
        todo("t1", "in_progress", "pending"),
        Turn(tool_calls=(ToolCallSpec("ls", {}, "l1"),)),
        todo("t2", "done", "in_progress"),
        Turn(text="All planned."),
    )
    child = spawn_chat(llm_server, tmp_path, "--yes", rows=ROWS)
    screen = tall(child)
    try:
        screen.wait_for("›")
        child.sendline("plan the fix")
        screen.wait_for("All planned.")
        screen.wait_for("ctx ")  # the footer: the prompt has ended
        screen.pump(SETTLE)  # the redraws after the prompt ended
        text = screen.text
        assert text.count("plan 1/2 done") == 1, text  # printed once, not also kept live
        assert "plan 0/2 done" not in text  # the first state was drawn in place, then replaced
        assert re.search(r"☑ look around", text) and re.search(r"◐ fix it", text)
        assert "todo" not in text  # no panel per todo call
    finally:
        child.close(force=True)

    resumed = spawn_chat(llm_server, tmp_path, "--yes", "-c", rows=ROWS)
    again = tall(resumed)
    try:
        again.wait_for("resumed")
        assert again.text.count("plan 1/2 done") == 1
    finally:
        resumed.close(force=True)


def test_ctrl_o_opens_the_last_shown_call_not_the_plan(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "echo from-the-command"}, "b1"),)),
        todo("t1", "done", "done"),
        Turn(text="Checked."),
    )
    child = spawn_chat(llm_server, tmp_path, "--yes", rows=ROWS)
    screen = tall(child)
    try:
        screen.wait_for("›")
        child.sendline("check it")
        screen.wait_for("ctx ")
        child.send(CTRL_O)
        screen.wait_for("#1 bash $ echo from-the-command")
        assert '{"todos"' not in screen.text
    finally:
        child.close(force=True)
