"""`di-code chat` shows all an approval approves (a pty read through pyte): a write taller than
the screen prints its first and last lines and how many are between (what the prompt's area
leaves no room for is in the terminal's scrollback); `v` pages all of them."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect
import pytest

from tests.support.approval import GUARD_WAIT
from tests.support.chat import DI_CODE, TIMEOUT, spawn_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def test_a_tall_write_shows_its_ends_and_v_pages_every_line(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    content = "".join(f"row {n:03d}\n" for n in range(1, 201))
    write = ToolCallSpec("write", {"path": "big.txt", "content": content}, "w1")
    llm_server.script(Turn(tool_calls=(write,)), Turn(text="all done"))
    child = pexpect.spawn(
        str(DI_CODE),
        ["chat", "--model", "openai/test-model"],
        cwd=str(tmp_path),
        env={**spawn_env(llm_server), "PAGER": "cat"},
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    screen = Screen(child, history=1000)
    try:
        screen.wait_for("›")
        child.sendline("write it")
        screen.wait_for("[v] view all")
        screen.pump(GUARD_WAIT)
        text = screen.seen
        assert "row 001" in text and "row 200" in text
        assert "more lines here: press v to see all 200" in text
        screen.pump(GUARD_WAIT)
        child.send("v")
        child.expect("row 100")  # what the ends left out, through the pager
        screen.pump(GUARD_WAIT)
        child.send("y")
        screen.wait_for("all done")
    finally:
        child.close(force=True)
    assert (tmp_path / "big.txt").read_text() == content


def test_q_after_view_all_returns_to_the_question(llm_server: LLMServer, tmp_path: Path) -> None:
    """As in a pager, `q` after `v` is no message to the model: the next key still answers
    (it used to type `q`, and `y` then made the message "qy")."""
    content = "".join(f"row {n:03d}\n" for n in range(1, 201))
    write = ToolCallSpec("write", {"path": "big.txt", "content": content}, "w1")
    llm_server.script(Turn(tool_calls=(write,)), Turn(text="all done"))
    child = pexpect.spawn(
        str(DI_CODE),
        ["chat", "--model", "openai/test-model"],
        cwd=str(tmp_path),
        env={**spawn_env(llm_server), "PAGER": "cat"},
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    screen = Screen(child)
    try:
        screen.wait_for("›")
        child.sendline("write it")
        screen.wait_for("[v] view all")
        screen.pump(GUARD_WAIT)
        child.send("v")
        child.expect("row 100")
        screen.pump(GUARD_WAIT)
        child.send("q")
        screen.pump(GUARD_WAIT)
        child.send("y")
        screen.wait_for("all done")
        assert "qy" not in screen.text
    finally:
        child.close(force=True)
    assert (tmp_path / "big.txt").read_text() == content
    assert "qy" not in json.dumps(llm_server.requests[-1].body)
