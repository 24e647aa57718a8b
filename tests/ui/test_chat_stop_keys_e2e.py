"""Esc stops the agent like Ctrl-C, in a real pseudo-terminal: prompt-toolkit must not hold a
lone Esc back to see whether Enter follows (Alt+Enter). The key-to-abort times are printed
(`pytest -s`) for the record; load on the machine decides them, so nothing asserts a figure.
prompt-toolkit is told not to ask for the cursor position here (it would wait for the answer
before drawing, and both keys would look slower than they are)."""

from __future__ import annotations

import time
from pathlib import Path

import pexpect
import pytest

from tests.support.chat import DI_CODE, TIMEOUT, quit_chat, spawn_env
from tests.support.llm_server import LLMServer, Turn
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def open_chat(server: LLMServer, workspace: Path) -> tuple[pexpect.spawn, Screen]:
    child = pexpect.spawn(
        str(DI_CODE),
        ["chat", "--model", "openai/test-model"],
        cwd=str(workspace),
        env={**spawn_env(server), "PROMPT_TOOLKIT_NO_CPR": "1"},
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    screen = Screen(child, 30)
    screen.wait_for("›")
    return child, screen


STALLED = Turn(
    text="Thinking about it slowly and at length", chunk_size=64, fault="stall", fault_after=3
)


@pytest.mark.parametrize(("key", "name"), [("\x1b", "Esc"), ("\x03", "Ctrl-C")])
def test_the_stop_key_aborts_a_stalled_reply_and_the_chat_goes_on(
    llm_server: LLMServer, tmp_path: Path, key: str, name: str
) -> None:
    llm_server.script(STALLED, Turn(text="Back again."))
    child, screen = open_chat(llm_server, tmp_path)
    try:
        child.sendline("go")
        screen.wait_for("Thinking about")
        pressed = time.monotonic()
        child.send(key)
        screen.wait_for("■ aborted")
        print(f"\n{name}: key to abort shown {1000 * (time.monotonic() - pressed):.0f} ms")
        assert llm_server.wait_disconnects(1)
        child.sendline("again")
        lines = screen.wait_until(
            lambda now: any(line.startswith("test-model · ") and "%)" in line for line in now),
            "the footer of the reply after the abort",
        )
        footer = [line for line in lines if line.startswith("test-model · ")][-1]
        assert "?" not in footer and "≥" not in footer, footer
        quit_chat(child)
    finally:
        child.close(force=True)


def test_alt_enter_still_adds_a_line_while_the_agent_works(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(STALLED, Turn(text="Got both lines."))
    child, screen = open_chat(llm_server, tmp_path)
    try:
        child.sendline("go")
        screen.wait_for("Thinking about")
        child.send("first\x1b\rsecond")
        screen.wait_for("second")
        assert not any("■ aborted" in line for line in screen.lines)
        child.send("\x03")
        screen.wait_for("■ aborted")
        child.send("\r")
        screen.wait_for("Got both lines.")
        quit_chat(child)
    finally:
        child.close(force=True)
    assert llm_server.requests[-1].body["messages"][-1]["content"] == "first\nsecond"


def test_esc_then_enter_a_moment_later_stops_rather_than_adding_a_line(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """A person's Esc and Enter come in two reads: prompt-toolkit used to wait 1.5 s to see
    whether Esc began Alt+Enter, and an Enter within that time added a line instead."""
    llm_server.script(STALLED, Turn(text="Back again."))
    child, screen = open_chat(llm_server, tmp_path)
    try:
        child.sendline("go")
        screen.wait_for("Thinking about")
        child.send("\x1b")
        time.sleep(0.8)
        child.send("\r")
        screen.wait_for("■ aborted")
        assert llm_server.wait_disconnects(1)
        child.sendline("again")
        screen.wait_for("Back again.")
        quit_chat(child)
    finally:
        child.close(force=True)
