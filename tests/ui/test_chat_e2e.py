"""`di-code chat` in a real pseudo-terminal against the loopback model server."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

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


def wait_until_gone(argv: list[str]) -> bool:
    deadline = time.monotonic() + TIMEOUT
    while processes_with_argv(argv):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def spawn_chat(server: LLMServer, workspace: Path, *args: str) -> pexpect.spawn:
    env = dict(os.environ)
    env.update(
        OPENAI_BASE_URL=server.openai_base_url, OPENAI_API_KEY="test-key", TERM="xterm-256color"
    )
    return pexpect.spawn(
        str(DI_CODE),
        ["chat", "--model", "openai/test-model", *args],
        cwd=str(workspace),
        env=env,
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=TIMEOUT,
    )


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
    child = spawn_chat(llm_server, tmp_path, "--yes")
    try:
        child.expect("›")
        child.sendline("what is the answer?")
        child.expect("forty-two")
        child.sendline("sleep for a while")
        child.expect(f"sleep {seconds}")
        deadline = time.monotonic() + TIMEOUT
        while not processes_with_argv(["sleep", seconds]):
            assert time.monotonic() < deadline, "the sleep never started"
            time.sleep(0.05)
        child.sendcontrol("c")
        child.expect("aborted")
        assert wait_until_gone(["sleep", seconds])
        child.sendline("are you there?")
        child.expect("Still alive after the abort")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
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
