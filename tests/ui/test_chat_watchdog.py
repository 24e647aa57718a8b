"""`di-code chat` whose event loop is blocked (a plugin tool that sleeps on it) and that gets
SIGTERM: the watchdog ends it within its second, with 143, the terminal's modes as they were
before the prompt put it in raw mode, and no process of its tree left."""

from __future__ import annotations

import signal
import termios
import time
import uuid
from pathlib import Path

import pexpect
import pytest

from tests.support.chat import DI_CODE, TIMEOUT, spawn_env
from tests.support.llm_server import LLMServer, call
from tests.support.processes import MARK, marked, wait_until
from tests.support.stops import EXIT_BOUND, plugin_site


def cooked(fd: int) -> bool:
    return bool(termios.tcgetattr(fd)[3] & termios.ICANON)


@pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed in this venv")
def test_a_blocked_loop_gets_the_terminal_back_and_ends(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(call("block", {}))
    mark = uuid.uuid4().hex
    env = {
        **spawn_env(llm_server),
        MARK: mark,
        "PYTHONPATH": str(plugin_site(tmp_path)),
        "STOP_TEST_DIR": str(tmp_path),
    }
    child = pexpect.spawn(
        str(DI_CODE),
        ["chat", "--model", "openai/test-model", "--yes", "--sandbox", "off"],
        cwd=str(tmp_path),
        env=env,
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    try:
        assert cooked(child.child_fd)
        child.expect("›")
        child.sendline("block")
        wait_until((tmp_path / "block").exists, "the blocking tool to start")
        assert not cooked(child.child_fd)  # the prompt's raw mode
        stopped = time.monotonic()
        child.kill(signal.SIGTERM)
        wait_until(lambda: not child.ptyproc.isalive(), "di-code to end")
        assert time.monotonic() - stopped < EXIT_BOUND
        assert child.ptyproc.exitstatus == 143
        assert cooked(child.child_fd)
        wait_until(lambda: not marked(mark), "every process of the tree to end")
    finally:
        child.close(force=True)
