"""The first-run trust question of `di-code chat`, in a real pty read through pyte: a project
whose settings had keys held back is asked about once, before the first prompt, under the
approval question's guard; y trusts it (at once), Enter or n leaves it untrusted,
typed-ahead text never answers, and `run` never asks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from di_code.config.settings import load_settings
from tests.support.approval import GUARD_WAIT, QUESTION, untrusted_project
from tests.support.chat import DI_CODE, TIMEOUT, spawn_chat, spawn_env
from tests.support.llm_server import LLMServer, Turn
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def answer_key(screen: Screen, key: str) -> None:
    """Press `key` once the question is on screen and its guard delay is over."""
    screen.wait_for("y/N")
    screen.pump(GUARD_WAIT)
    screen.child.send(key)


def test_yes_trusts_the_project_at_once(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    config = untrusted_project(tmp_path)
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        screen.wait_for(QUESTION)
        assert "permissions.mode" in screen.text and "y/N" in screen.text
        answer_key(screen, "y")
        screen.wait_for("Permission mode: accept-edits.")
        screen.wait_for("mode: accept-edits ·")  # applied in this chat, at once
    finally:
        child.close(force=True)
    assert load_settings(di_code_home, tmp_path).permission_mode == "accept-edits"
    assert str(config) in "".join(screen.text.split())


def test_enter_says_no_and_typed_ahead_text_never_answers(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    untrusted_project(tmp_path)
    llm_server.script(Turn(text="hello back"))
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        child.send("y")  # typed before the question is drawn: it stays in the input
        screen.wait_for(QUESTION)
        screen.pump(GUARD_WAIT * 2)
        assert "› y" in screen.text
        child.sendcontrol("u")
        answer_key(screen, "\r")  # Enter: the default, no
        screen.wait_for("not trusted")
        child.sendline("hi")
        screen.wait_for("hello back")
        screen.pump(GUARD_WAIT)
        # Asked again, it would show twice: in the scrollback and in the prompt.
        assert screen.text.count("y/N") <= 1
    finally:
        child.close(force=True)
    assert load_settings(di_code_home, tmp_path).permission_mode is None


def test_ctrl_c_says_no(llm_server: LLMServer, tmp_path: Path, di_code_home: Path) -> None:
    untrusted_project(tmp_path)
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        screen.wait_for("y/N")
        child.sendcontrol("c")
        screen.wait_for("not trusted")
    finally:
        child.close(force=True)
    assert load_settings(di_code_home, tmp_path).permission_mode is None


def test_a_trusted_project_is_not_asked_about(llm_server: LLMServer, tmp_path: Path) -> None:
    untrusted_project(tmp_path)
    subprocess.run([DI_CODE, "trust"], cwd=tmp_path, env=spawn_env(llm_server), check=True)
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        screen.wait_for("mode: accept-edits ·")
        screen.pump(GUARD_WAIT)
        assert QUESTION not in screen.text
    finally:
        child.close(force=True)


def test_run_never_asks(llm_server: LLMServer, tmp_path: Path) -> None:
    untrusted_project(tmp_path)
    llm_server.script(Turn(text="hi"))
    done = subprocess.run(
        [DI_CODE, "run", "--model", "openai/test-model", "hello"],
        cwd=tmp_path,
        env=spawn_env(llm_server),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert QUESTION not in done.stdout + done.stderr
    assert "ignored until you trust this project" in done.stderr


def test_the_open_question_is_on_screen_once(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    """Printed above the prompt, the question is not drawn again in the prompt's own line."""
    untrusted_project(tmp_path)
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        screen.wait_for("y/N (Enter: no)")
        screen.pump(GUARD_WAIT)
        assert screen.text.count(QUESTION) == 1, screen.text
        answer_key(screen, "n")
        screen.wait_for("not trusted")
        assert screen.text.count(QUESTION) == 1, screen.text
    finally:
        child.close(force=True)


def test_a_prompt_sent_before_the_answer_follows_it(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    """Nothing typed is lost: a prompt entered while the question is open (it never answers
    it) is queued and sent once the question is answered."""
    untrusted_project(tmp_path)
    llm_server.script(Turn(text="hello back"))
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        screen.wait_for(QUESTION)
        child.sendline("what is this project?")
        screen.wait_for("queued › what is this project?")
        answer_key(screen, "n")
        screen.wait_for("hello back")
    finally:
        child.close(force=True)
    assert llm_server.requests[0].body["messages"][-1]["content"] == "what is this project?"


def test_a_file_changed_while_asked_is_not_trusted_but_asked_again(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    """A yes trusts the bytes the question showed: a settings file and a hooks file rewritten
    while it was open (a `git pull`, a watcher) are not trusted unseen; the question comes
    again with what they hold now."""
    config = untrusted_project(tmp_path)
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        screen.wait_for("y/N")
        config.write_text('[permissions]\nmode = "auto"\n', encoding="utf-8")
        hooks = tmp_path / ".claude" / "settings.json"
        hooks.parent.mkdir()
        hooks.write_text(
            '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch pwned"}]}]}}',
            encoding="utf-8",
        )
        answer_key(screen, "y")
        screen.wait_for("changed after the question")
        screen.wait_for('"auto"')
        screen.wait_for("touch pwned")
        assert load_settings(di_code_home, tmp_path).permission_mode is None
        screen.wait_for(QUESTION, after="changed after the question")
        answer_key(screen, "n")
        screen.wait_for("not trusted")
    finally:
        child.close(force=True)
    assert load_settings(di_code_home, tmp_path).permission_mode is None
    assert not (di_code_home / "trusted.json").exists()
