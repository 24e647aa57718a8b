"""`di-code chat` in a real pseudo-terminal against the loopback model server."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pexpect
import pyte
import pytest

from tests.support.llm_server import HttpError, LLMServer, ToolCallSpec, Turn

DI_CODE = Path(sys.executable).with_name("di-code")
TIMEOUT = 20


def processes_with_argv(argv: list[str]) -> list[int]:
    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == wanted:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_until_running(argv: list[str]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not processes_with_argv(argv):
        assert time.monotonic() < deadline, f"{argv} never started"
        time.sleep(0.05)


def wait_until_gone(argv: list[str]) -> bool:
    deadline = time.monotonic() + TIMEOUT
    while processes_with_argv(argv):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def spawn_env(server: LLMServer) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        OPENAI_BASE_URL=server.openai_base_url,
        OPENAI_API_KEY="test-key",
        TERM="xterm-256color",
        PAGER="less",
    )
    return env


def spawn_chat(
    server: LLMServer,
    workspace: Path,
    *args: str,
    rows: int = 30,
    columns: int = 100,
    env: dict[str, str] | None = None,
) -> pexpect.spawn:
    return pexpect.spawn(
        str(DI_CODE),
        ["chat", "--model", "openai/test-model", *args],
        cwd=str(workspace),
        env=spawn_env(server) | (env or {}),
        dimensions=(rows, columns),
        encoding="utf-8",
        timeout=TIMEOUT,
    )


@contextlib.contextmanager
def chatting(server: LLMServer, workspace: Path, *args: str) -> Iterator[pexpect.spawn]:
    """A chat at its first prompt; a block that ends without an error leaves it by `/exit` and
    waits for it to end, and the chat is closed however the block ends."""
    child = spawn_chat(server, workspace, *args)
    try:
        child.expect("›")
        yield child
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def say(child: pexpect.spawn, line: str, *replies: str) -> None:
    """Type `line` and wait for each of `replies` in turn."""
    child.sendline(line)
    for reply in replies:
        child.expect(reply)


class Screen:
    """What a person sees: the child's output fed through a terminal emulator (pyte)."""

    def __init__(self, child: pexpect.spawn, rows: int, columns: int) -> None:
        self.child = child
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.Stream(self.screen)

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def wait_for(self, found: Callable[[list[str]], bool], what: str) -> list[str]:
        """Read until `found(lines)` holds; fail (showing the screen) after TIMEOUT."""
        deadline = time.monotonic() + TIMEOUT
        while not found(self.lines):
            if time.monotonic() > deadline:
                pytest.fail(f"never saw {what}:\n" + "\n".join(self.lines))
            self._read()
        return self.lines

    def settle(self, seconds: float) -> list[str]:
        """Keep reading for `seconds` (a live area gets several redraws meanwhile)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._read()
        return self.lines

    def _read(self) -> None:
        with contextlib.suppress(pexpect.TIMEOUT):
            self.stream.feed(self.child.read_nonblocking(65536, timeout=0.05))

    def wait_text(self, text: str) -> list[str]:
        return self.wait_for(lambda lines: any(text in line for line in lines), repr(text))


def open_chat(
    server: LLMServer, workspace: Path, *args: str, rows: int = 30
) -> tuple[pexpect.spawn, Screen]:
    child = spawn_chat(server, workspace, *args, rows=rows)
    screen = Screen(child, rows, 100)
    screen.wait_text("›")
    return child, screen


def quit_chat(child: pexpect.spawn) -> None:
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


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


needs_di_code = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")
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
        lines = screen.wait_text("Printed sixty lines.")
        top = next(n for n, line in enumerate(lines) if line.startswith("╭─ bash $ for i"))
        bottom = next(n for n, line in enumerate(lines) if n > top and line.startswith("╰"))
        panel = lines[top : bottom + 1]
        assert panel[1].startswith("│ … 54 earlier lines")
        assert panel[-2].startswith("│ line 60") and panel[-2].endswith("│")
        assert "line 30" not in "\n".join(lines)
        child.sendcontrol("o")
        screen.wait_for(lambda now: any(line.startswith("│ line 30 ") for line in now), "line 30")
        child.send("q")
        screen.wait_text("›")
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
        screen.wait_text(status)
        lines = screen.wait_text(answer)
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
        screen.wait_text(f"sleep {seconds}")
        wait_until_running(["sleep", seconds])
        child.send("\x1b")
        lines = screen.wait_text("■ aborted")
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
        screen.wait_text("The capital is Paris.")
        quit_chat(child)
    finally:
        child.close(force=True)
    child, screen = open_chat(llm_server, tmp_path, "-c")
    try:
        lines = screen.wait_text("resumed")
        assert "› capital of France?" in lines
        assert "The capital is Paris." in lines
        assert any(line.endswith("ctx 15/128k (0%)") for line in lines)
        quit_chat(child)
    finally:
        child.close(force=True)
