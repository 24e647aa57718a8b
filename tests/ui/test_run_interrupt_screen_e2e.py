"""Ctrl-C in `di-code run` on a terminal: the running tool's live panel is erased whole, even
though the terminal echoes `^C` after it (a panel as wide as the screen made that echo wrap
to a line the live area did not know of, and its top line was left behind)."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pexpect
import pytest

from tests.support.chat import DI_CODE, TIMEOUT, spawn_env, wait_until_running
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def test_ctrl_c_leaves_no_piece_of_the_running_panel(llm_server: LLMServer, tmp_path: Path) -> None:
    seconds = f"30.{os.getpid()}"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": f"sleep {seconds}"}, "c1"),))
    )
    child = pexpect.spawn(
        str(DI_CODE),
        ["run", "--yes", "--model", "openai/test-model", "wait a while"],
        cwd=str(tmp_path),
        env=spawn_env(llm_server),
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    screen = Screen(child, 30)
    try:
        screen.wait_for("running")
        wait_until_running(["sleep", seconds])
        child.sendcontrol("c")
        deadline = time.monotonic() + TIMEOUT
        while child.isalive() and time.monotonic() < deadline:
            with contextlib.suppress(pexpect.TIMEOUT, pexpect.EOF):
                screen.stream.feed(child.read_nonblocking(65536, timeout=0.1))
        with contextlib.suppress(pexpect.EOF):
            screen.stream.feed(child.read_nonblocking(65536, timeout=0.5))
    finally:
        child.close(force=True)
    lines = [line for line in screen.lines if line]
    assert any("■ aborted" in line for line in lines), "\n".join(lines)
    assert not any(line.startswith("╭─ bash") for line in lines), "\n".join(lines)
    assert lines[-1] == "di-code: interrupted"
