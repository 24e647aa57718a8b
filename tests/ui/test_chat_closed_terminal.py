"""`di-code chat` whose terminal closes (the kernel sends SIGHUP) while a command runs: it ends
with 129, the prompt aborted and saved, and no process of its tree is left (each carries a
marker in its environment)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pexpect
import pytest

from tests.support.chat import DI_CODE, TIMEOUT, spawn_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.processes import MARK, marked, wait_until
from tests.support.session_files import saved_stop_reasons

EXIT_BOUND = 15.0


@pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed in this venv")
def test_a_closed_terminal_ends_chat_and_everything_it_started(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    started = tmp_path / "started"
    command = f"sleep 1000 > /dev/null 2>&1 & touch {started}; sleep 1000"
    llm_server.script(Turn(tool_calls=(ToolCallSpec("bash", {"command": command}, "c1"),)))
    mark = uuid.uuid4().hex
    child = pexpect.spawn(
        str(DI_CODE),
        ["chat", "--model", "openai/test-model", "--yes", "--sandbox", "off"],
        cwd=str(tmp_path),
        env={**spawn_env(llm_server), MARK: mark},
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    try:
        child.expect("›")
        child.sendline("wait")
        wait_until(started.exists, "the command to start")
        closed = time.monotonic()
        child.ptyproc.fileobj.close()  # the terminal window closes
        wait_until(lambda: not child.ptyproc.isalive(), "di-code to end")
        assert time.monotonic() - closed < EXIT_BOUND
        assert child.ptyproc.exitstatus == 129
        assert saved_stop_reasons(di_code_home)[-1] == "aborted"
        wait_until(lambda: not marked(mark), "every process of the tree to end")
    finally:
        child.close(force=True)
