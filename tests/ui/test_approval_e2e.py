"""Approval questions in `di-code chat` in a real pseudo-terminal, read through a terminal
emulator (pyte): typed-ahead text never answers, Shift+Tab changes the mode in the footer, and
a command cannot redraw its own question."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect
import pytest

from tests.support.approval import GUARD_WAIT, answer, last_request
from tests.support.chat import DI_CODE, TIMEOUT, spawn_chat
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


@contextmanager
def chat_asking(
    server: LLMServer, workspace: Path, command: str, *typed_ahead: str
) -> Iterator[Screen]:
    """A chat whose model asks to run `command`, then answers "all done"; the prompt is sent,
    then `typed_ahead` right after it."""
    server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": command}, "call-1"),)),
        Turn(text="all done"),
    )
    child = spawn_chat(server, workspace)
    try:
        screen = Screen(child)
        screen.wait_for("›")
        child.sendline("go on")
        for text in typed_ahead:
            child.send(text)
        yield screen
    finally:
        child.close(force=True)


def test_typed_ahead_text_never_answers_a_question(llm_server: LLMServer, tmp_path: Path) -> None:
    with chat_asking(llm_server, tmp_path, "touch made.txt", "yes") as screen:
        screen.wait_for("Allow?")
        screen.pump(GUARD_WAIT * 2)
        assert not (tmp_path / "made.txt").exists()
        assert "› yes" in screen.text  # the text stays in the input
        assert "Enter sends your message, or clear the line to answer" in screen.text
        screen.child.sendcontrol("u")  # clear the line: now keys answer, after the guard delay
        answer(screen, "n")
        screen.wait_for("denied")  # before the rest of the turn can scroll it off the screen
        screen.wait_for("all done")
    assert not (tmp_path / "made.txt").exists()
    assert "the user declined this bash call" in last_request(llm_server)
    assert "Stop here and wait for the user" in last_request(llm_server)


def test_answer_keys_are_typed_while_the_user_writes_a_steering_message(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    with chat_asking(llm_server, tmp_path, "touch made.txt") as screen:
        answer(screen, "w")  # w starts a message: its a, n and y are letters, not answers
        screen.child.send("hy and now")
        screen.wait_for("› why and now")
        screen.pump(GUARD_WAIT)
        assert not (tmp_path / "made.txt").exists()
        assert llm_server.pending() == 1  # the question is still open
        screen.child.send("\r")  # sent as a steering message; the question stays
        answer(screen, "t")
        screen.wait_for("Tell the model what to do instead")
        screen.child.sendline("use the write tool")
        screen.wait_for("all done")
    sent = last_request(llm_server)
    assert "use the write tool" in sent and "why and now" in sent
    assert not (tmp_path / "made.txt").exists()


def test_shift_tab_cycles_the_mode_shown_in_the_footer(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        screen.wait_for("mode: ask ·")
        for mode in ("accept-edits", "plan", "auto", "ask"):
            child.send("\x1b[Z")  # Shift+Tab
            screen.wait_for(f"mode: {mode} ·")
        child.send("\x1b[Z")
        screen.wait_for("mode: accept-edits ·")
        child.sendline("/permissions")
        screen.wait_for("Permission mode: accept-edits")
    finally:
        child.close(force=True)


def test_a_spoofed_command_shows_its_escape_and_the_question_after_it(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    with chat_asking(llm_server, tmp_path, "touch P\x1b[2K\rgit status") as screen:
        deadline = time.monotonic() + TIMEOUT
        while True:  # both on one snapshot: the prompt area may be mid-redraw in another
            lines = screen.text.splitlines()
            command = [i for i, line in enumerate(lines) if "touch P␛[2K␍git status" in line]
            question = [i for i, line in enumerate(lines) if "Allow?" in line]
            if command and question:
                break
            assert time.monotonic() < deadline, f"no command and question:\n{screen.text}"
            screen.pump(0.1)
        assert command[0] < question[0]
        answer(screen, "n")
        screen.wait_for("all done")
    assert not (tmp_path / "P").exists()


@pytest.mark.parametrize("columns", [60, 80])
def test_every_choice_of_a_question_is_readable_on_a_narrow_terminal(
    llm_server: LLMServer, tmp_path: Path, columns: int
) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    edit = {"path": "notes.txt", "edits": [{"old_text": "hello", "new_text": "hello, world"}]}
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("edit", edit, "call-1"),)), Turn(text="all done")
    )
    child = spawn_chat(llm_server, tmp_path, columns=columns)
    try:
        screen = Screen(child, columns=columns)
        screen.wait_for("›")
        child.sendline("go on")
        screen.wait_for("[t]ell it what to do instead")
        question = screen.text[screen.text.index("Allow?") :]
        for choice in ("[y]es", "[a] always: edits to notes.txt", "[e] always: all edits", "[n]o"):
            assert choice in question
        time.sleep(GUARD_WAIT)
        child.send("y")
        screen.wait_for("all done")
        assert (tmp_path / "notes.txt").read_text() == "hello, world\n"
    finally:
        child.close(force=True)


@pytest.mark.parametrize("wait", [GUARD_WAIT, 0.0], ids=["after-guard", "at-once"])
def test_esc_on_an_open_question_stops_the_turn_like_ctrl_c(
    llm_server: LLMServer, tmp_path: Path, wait: float
) -> None:
    """Esc stops the agent in every state: on an open question it is a no and a stop (no
    further request), whether or not the question's guard delay is over."""
    with chat_asking(llm_server, tmp_path, "touch made.txt") as screen:
        screen.wait_for("[y]es")
        screen.pump(wait)
        screen.child.send("\x1b")
        screen.wait_for("■ aborted")
        screen.pump(0.5)
        assert "denied" in screen.text
        assert len(llm_server.requests) == 1 and llm_server.pending() == 1  # "all done" unasked
        screen.child.sendline("/exit")
        screen.child.expect(pexpect.EOF)
    assert not (tmp_path / "made.txt").exists()
