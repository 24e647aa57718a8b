"""`/tree` in `di-code chat`, in a real pseudo-terminal (issue 45 item 2): the session's
branches as a tree, moved over with the arrow keys; Enter goes on from the chosen branch (the
next request carries its messages, and so does a resumed chat), Esc leaves it as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.chat import DI_CODE, open_chat, quit_chat
from tests.support.llm_server import LLMServer, Turn
from tests.support.screen import Screen
from tests.support.session_branches import cursor_on

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def send(screen: Screen, line: str, reply: str) -> None:
    screen.child.sendline(line)
    screen.wait_for(reply)


def branched_chat(llm_server: LLMServer, tmp_path: Path, *later: str) -> Screen:
    """PROMPT-ONE, then two branches after it: PROMPT-TWO (left) and PROMPT-THREE (current);
    the model answers ANSWER-ONE and so on, then ANSWER-`later`."""
    names = ("ONE", "TWO", "THREE", *later)
    llm_server.script(*(Turn(text=f"ANSWER-{name}") for name in names))
    _, screen = open_chat(llm_server, tmp_path)
    send(screen, "PROMPT-ONE", "ANSWER-ONE")
    send(screen, "PROMPT-TWO", "ANSWER-TWO")
    send(screen, "/rewind 2 conversation", "back to before prompt 2")
    send(screen, "PROMPT-THREE", "ANSWER-THREE")
    return screen


def last_request(llm_server: LLMServer) -> str:
    return json.dumps(llm_server.requests[-1].body)


def test_tree_moves_to_the_other_branch_and_a_resumed_chat_goes_on_there(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    screen = branched_chat(llm_server, tmp_path, "FOUR", "FIVE")
    screen.child.sendline("/tree")
    screen.wait_until(cursor_on("PROMPT-THREE"), "the cursor on the current branch")
    lines = screen.wait_for("← current")
    assert any("PROMPT-ONE" in line for line in lines)
    screen.child.send("\x1b[A")  # up
    screen.wait_until(cursor_on("PROMPT-TWO"), "the cursor on the other branch")
    screen.child.send("\r")
    screen.wait_for("Now on “PROMPT-TWO”")
    send(screen, "PROMPT-FOUR", "ANSWER-FOUR")
    sent = last_request(llm_server)
    assert all(text in sent for text in ("PROMPT-ONE", "PROMPT-TWO", "ANSWER-TWO", "PROMPT-FOUR"))
    assert "PROMPT-THREE" not in sent and "ANSWER-THREE" not in sent
    quit_chat(screen.child)

    child, screen = open_chat(llm_server, tmp_path, "--continue")
    send(screen, "PROMPT-FIVE", "ANSWER-FIVE")
    quit_chat(child)
    sent = last_request(llm_server)
    assert "PROMPT-FOUR" in sent and "PROMPT-THREE" not in sent


def test_esc_leaves_the_conversation_on_its_branch_saved_as_it_was(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    screen = branched_chat(llm_server, tmp_path, "FOUR")
    [saved] = di_code_home.glob("sessions/*/*.jsonl")
    before = saved.read_bytes()
    screen.child.sendline("/tree")
    screen.wait_until(cursor_on("PROMPT-THREE"), "the cursor on the current branch")
    screen.child.send("\x1b[A")
    screen.wait_until(cursor_on("PROMPT-TWO"), "the cursor on the other branch")
    screen.child.send("\x1b")
    screen.wait_for("Left on the same branch")
    assert saved.read_bytes() == before
    send(screen, "PROMPT-FOUR", "ANSWER-FOUR")
    quit_chat(screen.child)
    sent = last_request(llm_server)
    assert "PROMPT-THREE" in sent and "PROMPT-TWO" not in sent
