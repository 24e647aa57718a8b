"""Chat commands that must do what they say, in a real pseudo-terminal: `chat -c` continues
the newest chat (not a later `run`), /clear, /compact and /model."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.chat import DI_CODE, TIMEOUT, open_chat, quit_chat, spawn_env
from tests.support.llm_server import LLMServer, Turn

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def test_chat_continue_takes_the_newest_chat_not_a_later_run(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(Turn(text="The capital is Paris."), Turn(text="Ran once."))
    child, screen = open_chat(llm_server, tmp_path)
    try:
        child.sendline("capital of France?")
        screen.wait_for("The capital is Paris.")
        quit_chat(child)
    finally:
        child.close(force=True)
    ran = subprocess.run(
        [str(DI_CODE), "run", "--model", "openai/test-model", "a one-shot task"],
        cwd=tmp_path,
        env=spawn_env(llm_server),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert ran.returncode == 0, ran.stderr
    child, screen = open_chat(llm_server, tmp_path, "-c")
    try:
        lines = screen.wait_for("resumed")
        assert "› capital of France?" in lines
        assert not any("a one-shot task" in line for line in lines)
        quit_chat(child)
    finally:
        child.close(force=True)


def test_clear_erases_the_screen_and_starts_a_new_session(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(Turn(text="An old answer."), Turn(text="A fresh answer."))
    child, screen = open_chat(llm_server, tmp_path)
    try:
        child.sendline("old question")
        screen.wait_for("An old answer.")
        child.sendline("/clear")
        lines = screen.wait_for("New session")
        assert not any("old" in line for line in lines), "\n".join(lines)
        assert lines[0].startswith("di-code chat · openai/test-model")
        child.sendline("new question")
        screen.wait_for("A fresh answer.")
        quit_chat(child)
    finally:
        child.close(force=True)
    assert "old question" not in str(llm_server.requests[-1].body)


def test_compact_when_asked_compacts_even_a_short_chat(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(
        Turn(text="One."),
        Turn(text="Two."),
        Turn(text="Three."),
        Turn(text="The user counted to three."),
        Turn(text="Four."),
    )
    child, screen = open_chat(llm_server, tmp_path)
    try:
        child.sendline("/compact")
        screen.wait_for("Nothing to compact: the conversation is empty.")
        for number, answer in (("first", "One."), ("second", "Two."), ("third", "Three.")):
            child.sendline(f"{number} question")
            screen.wait_for(answer)
        child.sendline("/compact")
        screen.wait_for("into a summary.")
        child.sendline("fourth question")
        screen.wait_for("Four.")
        quit_chat(child)
    finally:
        child.close(force=True)
    sent = str(llm_server.requests[-1].body["messages"])
    assert "The user counted to three." in sent
    assert "first question" not in sent and "second question" not in sent
