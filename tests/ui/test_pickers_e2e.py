"""The chat's pickers in a real pseudo-terminal against the loopback model server: `/model`
alone opens a list of models (kept in the session, so `chat -c` goes on with it), `/resume`
alone a list of this folder's sessions, and `/thinking` or Alt+T step the thinking level
that the next request carries."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pexpect
import pytest

from di_code.session import SessionStore
from tests.support.chat import DI_CODE, TIMEOUT, quit_chat, spawn_chat, spawn_env
from tests.support.llm_server import LLMServer, Turn
from tests.support.pickers import THINKING_MODEL, saved
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def test_thinking_steps_by_command_and_key_and_the_next_request_carries_it(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(Turn(text="Thought about it."), Turn(text="Not this time."))
    child = spawn_chat(llm_server, tmp_path, "--model", THINKING_MODEL)
    screen = Screen(child)
    try:
        screen.wait_for("thinking: off")
        child.sendline("/thinking")
        screen.wait_for("Thinking: low")
        screen.wait_for("thinking: low")
        child.send("\x1bt")  # Alt+T
        screen.wait_for("Thinking: medium")
        screen.wait_for("thinking: medium")
        child.sendline("think")
        screen.wait_for("Thought about it.")
        assert llm_server.requests[-1].body["reasoning_effort"] == "medium"
        child.sendline("/thinking off")
        screen.wait_for("thinking: off")
        child.sendline("now plainly")
        screen.wait_for("Not this time.")
        assert "reasoning_effort" not in llm_server.requests[-1].body
        quit_chat(child)
    finally:
        child.close(force=True)


def test_model_alone_opens_a_list_filtered_as_typed_and_the_choice_is_kept(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(Turn(text="First answer."), Turn(text="Second answer."))
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        child.sendline("/model")
        screen.wait_for("Model (now openai/test-model)")
        screen.wait_for("›* openai/test-model")  # the current one, selected and marked
        child.send("gpt 5 mini")
        screen.wait_for("›  openai/gpt-5-mini", after="filter› gpt 5 mini")
        child.send("\r")
        screen.wait_for("Model: openai/gpt-5-mini")
        child.sendline("hello")
        screen.wait_for("First answer.")
        assert llm_server.requests[-1].body["model"] == "gpt-5-mini"
        child.sendline("/model")
        screen.wait_for("›* openai/gpt-5-mini")
        child.send("\x1b")  # Esc leaves the list: nothing changes
        screen.wait_for("Model: openai/gpt-5-mini (unchanged)")
        quit_chat(child)
    finally:
        child.close(force=True)
    again = continue_chat(llm_server, tmp_path)  # no --model: the session's choice holds
    try:
        screen = Screen(again)
        screen.wait_for("openai/gpt-5-mini")
        again.sendline("and again")
        screen.wait_for("Second answer.")
        assert llm_server.requests[-1].body["model"] == "gpt-5-mini"
        quit_chat(again)
    finally:
        again.close(force=True)


def continue_chat(server: LLMServer, workspace: Path) -> pexpect.spawn:
    return pexpect.spawn(
        str(DI_CODE),
        ["chat", "-c"],
        cwd=str(workspace),
        env=spawn_env(server),
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=TIMEOUT,
    )


def test_resume_alone_lists_this_folders_sessions_filtered_as_typed(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    store = SessionStore(di_code_home)
    older = saved(store, tmp_path, "fix the parser")
    os.utime(older, (time.time() - 120, time.time() - 120))
    newer = saved(store, tmp_path, "add a \x1b[31mred\x1b[0m feature\nplease")
    os.utime(newer, (time.time() - 60, time.time() - 60))
    broken = store.directory(tmp_path) / "2020-01-01T00-00-00-000000Z_broken.jsonl"
    broken.write_bytes(b"\xff not a session\n")
    llm_server.script(Turn(text="Back on the parser."))
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        child.sendline("/resume")
        screen.wait_for("Resume a session")
        screen.wait_for("add a ␛[31mred␛[0m feature please")  # one visible line
        screen.wait_for("(unreadable session file)")
        screen.wait_for(f" 2. fix the parser  {time.strftime('%Y-%m-%d')}")
        screen.wait_for("›  (unreadable session file)")  # written last: the newest
        child.send("\x1b[B\x1b[B")  # Down twice
        screen.wait_for("›  2. fix the parser")
        child.send("\x1b[A\x1b[A")  # Up twice, back to the unreadable one
        screen.wait_for("›  (unreadable session file)")
        child.send("\r")
        screen.wait_for("✗ ")  # one line says why; the chat goes on
        child.sendline("/resume")
        screen.wait_for("Resume a session", after="✗ ")
        child.send("parser")
        screen.wait_for("›  2. fix the parser", after="filter› parser")
        child.send("\r")
        screen.wait_for(f"Resumed session {older.stem.partition('_')[2]} (2 messages)")
        child.sendline("go on")
        screen.wait_for("Back on the parser.")
        assert "fix the parser" in json.dumps(llm_server.requests[-1].body)
        quit_chat(child)
    finally:
        child.close(force=True)
