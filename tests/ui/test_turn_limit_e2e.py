"""A chat prompt at its turn limit asks whether the model goes on, in a real pty read through
pyte: y allows as many requests again, n ends the prompt there and the chat goes on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.approval import GUARD_WAIT
from tests.support.chat import DI_CODE, TIMEOUT, spawn_chat
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen


def question(made: int) -> str:
    return f"The model has made {made} requests for this prompt. Go on for 2 more? y/N"


pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def listing(call_id: str) -> Turn:
    return Turn(tool_calls=(ToolCallSpec("ls", {}, call_id),))


def posts(server: LLMServer) -> int:
    return len([request for request in server.requests if request.method == "POST"])


def asking(screen: Screen, made: int) -> bool:
    """The question for `made` requests printed, and the prompt line waiting for its answer."""
    lines = screen.text.splitlines()
    return any(question(made) in line for line in lines) and "y/N (Enter: no)" in lines


def answer_after(screen: Screen, server: LLMServer, requests: int, key: str) -> None:
    """Once `requests` were made and the question is open (drawn in the prompt, not only left
    in the scrollback) for the guard delay, press `key`."""
    deadline = time.monotonic() + TIMEOUT
    while not (posts(server) == requests and asking(screen, requests)):
        assert time.monotonic() < deadline, f"never asked after {requests}:\n{screen.text}"
        screen.pump(0.1)
    screen.pump(GUARD_WAIT)
    screen.child.send(key)


def test_yes_lets_the_model_go_on_for_as_many_requests_again(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(listing("c1"), listing("c2"), listing("c3"), listing("c4"))
    llm_server.script(listing("c5"), Turn(text="never reached"))
    child = spawn_chat(llm_server, tmp_path, "--yes", "--max-turns", "2")
    screen = Screen(child)
    try:
        screen.wait_for("›")
        child.sendline("list it all")
        answer_after(screen, llm_server, 2, "y")
        answer_after(screen, llm_server, 4, "n")  # asked again after 2 more, counting all 4
        screen.wait_for("Turn limit reached (2)")
        assert posts(llm_server) == 4 and llm_server.pending() == 2
    finally:
        child.close(force=True)


def test_no_ends_the_prompt_and_the_chat_goes_on(llm_server: LLMServer, tmp_path: Path) -> None:
    llm_server.script(listing("c1"), listing("c2"), Turn(text="the next prompt's answer"))
    child = spawn_chat(llm_server, tmp_path, "--yes", "--max-turns", "2")
    screen = Screen(child)
    try:
        screen.wait_for("›")
        child.sendline("list forever")
        answer_after(screen, llm_server, 2, "\r")  # Enter: the default, no
        screen.wait_for("Turn limit reached (2)")
        assert posts(llm_server) == 2
        child.sendline("and now?")
        screen.wait_for("the next prompt's answer")
    finally:
        child.close(force=True)
