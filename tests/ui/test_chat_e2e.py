"""`di-code chat` in a real pseudo-terminal against the loopback model server."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.chat import (
    DI_CODE,
    TIMEOUT,
    chatting,
    needs_di_code,
    open_chat,
    quit_chat,
    say,
    wait_until_gone,
    wait_until_running,
)
from tests.support.llm_server import HttpError, LLMServer, ToolCallSpec, Turn


@pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed in this venv")
def test_chat_answers_aborts_a_tool_with_ctrl_c_and_goes_on(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    seconds = f"100.{os.getpid()}"
    llm_server.script(
        Turn(text="The answer is forty-two."),
        Turn(tool_calls=(ToolCallSpec("bash", {"command": f"sleep {seconds}"}, "call-1"),)),
        Turn(text="Still alive after the abort."),
    )
    with chatting(llm_server, tmp_path, "--yes") as child:
        say(child, "what is the answer?", "forty-two")
        say(child, "sleep for a while", f"sleep {seconds}")
        wait_until_running(["sleep", seconds])
        child.sendcontrol("c")
        child.expect("aborted")
        assert wait_until_gone(["sleep", seconds])
        say(child, "are you there?", "Still alive after the abort")
    assert child.exitstatus == 0
    assert len(llm_server.requests) == 3


@pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed in this venv")
def test_chat_without_a_terminal_points_to_run(tmp_path: Path) -> None:
    import subprocess

    result = subprocess.run(
        [str(DI_CODE), "chat"], capture_output=True, text=True, cwd=tmp_path, timeout=TIMEOUT
    )
    assert result.returncode == 2
    assert "chat needs a terminal" in result.stderr
    assert "di-code run" in result.stderr
    assert "Traceback" not in result.stderr


SIXTY_LINES = "for i in $(seq 1 60); do echo line $i; done"


@needs_di_code
def test_a_long_bash_output_shows_its_end_in_a_panel_and_ctrl_o_shows_all(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": SIXTY_LINES}, "call-1"),)),
        Turn(text="Printed sixty lines."),
    )
    child, screen = open_chat(llm_server, tmp_path, "--yes", rows=40)
    try:
        child.sendline("count to sixty")
        lines = screen.wait_for("Printed sixty lines.")
        top = next(n for n, line in enumerate(lines) if line.startswith("╭─ bash $ for i"))
        bottom = next(n for n, line in enumerate(lines) if n > top and line.startswith("╰"))
        panel = lines[top : bottom + 1]
        assert panel[1].startswith("│ … 54 earlier lines")
        assert panel[-2].startswith("│ line 60") and panel[-2].endswith("│")
        assert "line 30" not in "\n".join(lines)
        child.sendcontrol("o")
        screen.wait_until(lambda now: any(line.startswith("│ line 30 ") for line in now), "line 30")
        child.send("q")
        screen.wait_for("›")
        quit_chat(child)
    finally:
        child.close(force=True)


@needs_di_code
@pytest.mark.parametrize(
    ("script", "status", "answer"),
    [
        (
            (Turn(text="Sorry for the wait.", first_delay=3.0),),
            "waiting for test-model … ",
            "Sorry",
        ),
        (
            (HttpError(500, "boom", headers={"retry-after": "2"}), Turn(text="Answered.")),
            "HTTP 500 · retry 1/4 in ",
            "Answered.",
        ),
    ],
    ids=["slow-first-byte", "500-then-success"],
)
def test_the_status_line_shows_waiting_and_retrying_until_the_answer(
    llm_server: LLMServer, tmp_path: Path, script: tuple[Any, ...], status: str, answer: str
) -> None:
    llm_server.script(*script)
    child, screen = open_chat(llm_server, tmp_path)
    try:
        child.sendline("hello?")
        screen.wait_for(status)
        lines = screen.wait_for(answer)
        assert not any(status in line for line in lines)
        quit_chat(child)
    finally:
        child.close(force=True)
    assert len(llm_server.requests) == len(script)


@needs_di_code
def test_esc_kills_a_running_command_and_shows_the_abort(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    seconds = f"100.{os.getpid()}1"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": f"sleep {seconds}"}, "call-1"),))
    )
    child, screen = open_chat(llm_server, tmp_path, "--yes")
    try:
        child.sendline("sleep")
        screen.wait_for(f"sleep {seconds}")
        wait_until_running(["sleep", seconds])
        child.send("\x1b")
        lines = screen.wait_for("■ aborted")
        assert any(line.startswith("│ Interrupted by the user.") for line in lines)
        assert wait_until_gone(["sleep", seconds])
        quit_chat(child)
    finally:
        child.close(force=True)


@needs_di_code
def test_chat_continue_shows_the_previous_answer(llm_server: LLMServer, tmp_path: Path) -> None:
    llm_server.script(Turn(text="The capital is Paris."))
    child, screen = open_chat(llm_server, tmp_path)
    try:
        child.sendline("capital of France?")
        screen.wait_for("The capital is Paris.")
        quit_chat(child)
    finally:
        child.close(force=True)
    child, screen = open_chat(llm_server, tmp_path, "-c")
    try:
        lines = screen.wait_for("resumed")
        assert "› capital of France?" in lines
        assert "The capital is Paris." in lines
        assert any(line.endswith("ctx 15/128k (0%)") for line in lines)
        quit_chat(child)
    finally:
        child.close(force=True)
