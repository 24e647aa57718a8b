"""`di-code chat` in a real pseudo-terminal ended by SIGTERM or SIGHUP while a command runs:
the prompt is aborted and saved, and no process di-code started is left (the sandbox off);
Esc ends a turn whose plugin tool ignores its signal, and SIGTERM the chat after it."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pexpect
import pytest

from tests.support.chat import (
    DI_CODE,
    TIMEOUT,
    processes_with_argv,
    spawn_chat,
    wait_until_gone,
)
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.processes import wait_until
from tests.support.session_files import saved_stop_reasons
from tests.support.stops import plugin_site


def bash_call(command: str) -> Turn:
    return Turn(tool_calls=(ToolCallSpec("bash", {"command": command}, "call-1"),))


@pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed in this venv")
@pytest.mark.parametrize(("number", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_stop_signal_aborts_saves_and_leaves_no_process(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path, number: int, code: int
) -> None:
    background = ["sleep", f"200.{os.getpid()}"]
    running = ["sleep", f"100.{os.getpid()}"]
    llm_server.script(
        bash_call(f"{' '.join(background)} > /dev/null 2>&1 &"),
        Turn(text="The server is up."),
        bash_call(" ".join(running)),
    )
    child = spawn_chat(llm_server, tmp_path, "--yes", "--sandbox", "off")
    try:
        child.expect("›")
        child.sendline("start the server")
        child.expect("server is up")
        child.sendline("now wait")
        deadline = time.monotonic() + TIMEOUT
        while not processes_with_argv(running):
            assert time.monotonic() < deadline, "the command never started"
            time.sleep(0.05)
        child.kill(number)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == code
        assert wait_until_gone(running)
        assert wait_until_gone(background)
        assert saved_stop_reasons(di_code_home)[-1] == "aborted"
    finally:
        child.close(force=True)
        for pid in processes_with_argv(running) + processes_with_argv(background):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed in this venv")
@pytest.mark.parametrize("tool", ["stubborn", "sleeper"])
def test_esc_leaves_a_deaf_tool_behind_and_sigterm_ends_the_chat(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path, tool: str
) -> None:
    """A plugin tool that ignores its signal (an awaiting one that swallows its cancellation, a
    thread that never returns) holds neither Esc's end of the turn nor SIGTERM's exit."""
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec(tool, {}, "call-1"),)),
        Turn(text="Still here."),
    )
    env = {"PYTHONPATH": str(plugin_site(tmp_path)), "STOP_TEST_DIR": str(tmp_path)}
    child = spawn_chat(llm_server, tmp_path, "--yes", "--sandbox", "off", env=env)
    try:
        child.expect("›")
        child.sendline("go")
        wait_until(lambda: (tmp_path / tool).exists(), f"{tool} to start")
        child.send("\x1b")
        child.expect("aborted")
        child.sendline("are you there")
        child.expect("Still here")
        child.kill(signal.SIGTERM)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 143
        assert saved_stop_reasons(di_code_home) == ["tool_use", "aborted", "stop"]
    finally:
        child.close(force=True)
