"""The file tools (read, write, edit) attacked as a hostile model, repository or user would
(HOSTILE.md: work that does not end, text from outside, names and paths), through real
`di-code` processes: a chat in a pseudo-terminal, `run`, and `di-code acp` driven by the ACP
SDK's own client against a loopback model server."""

from __future__ import annotations

import time
from pathlib import Path

import pexpect
import pytest

from tests.cli.conftest import RunDiCode, request_text
from tests.cli.conftest import run_di_code as run_di_code  # the fixtures, for this folder too
from tests.cli.conftest import workspace as workspace
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.tools.test_edit_bounded import LIVENESS
from tests.ui.test_chat_e2e import DI_CODE, open_chat

STOP_BOUND = 8.0
"""Seconds from the key to the turn's end: generous on a loaded machine; what is caught is a
turn that waits for the whole work (tens of seconds here)."""


def lines_of(count: int) -> list[str]:
    """Distinct lines, each long enough that finding one is real work."""
    return [f"line {i:08d} " + "x" * 80 for i in range(count)]


def many_edits(path: str, lines: list[str]) -> ToolCallSpec:
    """One edit call that replaces every line on its own: work that grows with the number of
    edits times the file's size."""
    edits = [{"old_text": line, "new_text": line.upper()} for line in lines]
    return ToolCallSpec("edit", {"path": path, "edits": edits}, "many")


def test_an_edit_of_thousands_of_replacements_is_refused_at_once_saying_how_many_fit(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """8,000 edits of a 760 KB file took 22 s of CPU (each edit scans the whole file)."""
    lines = lines_of(8000)
    text = "\n".join(lines) + "\n"
    (workspace / "big.txt").write_text(text)
    llm_server.script(
        Turn(tool_calls=(many_edits("big.txt", lines),), chunk_size=1 << 20), Turn(text="ok")
    )
    started = time.monotonic()
    done = run_di_code("run", "--permission-mode", "auto", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < LIVENESS
    result = request_text(llm_server.requests[1].body)
    assert "8000 edits are too many for one call on big.txt" in result
    assert "send at most 1315 edits per call" in result
    assert (workspace / "big.txt").read_text() == text


@pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")
def test_esc_during_an_edit_of_many_replacements_ends_the_turn_and_writes_nothing(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """Under the bound, 1,300 edits of a 760 KB file are seconds of work on a thread: the
    stop used to wait for all of it, and the file was written after the user stopped."""
    lines = lines_of(8000)
    text = "\n".join(lines) + "\n"
    (tmp_path / "big.txt").write_text(text)
    llm_server.script(
        Turn(tool_calls=(many_edits("big.txt", lines[:1300]),), chunk_size=1 << 20),
        Turn(text="stopped, fine"),
    )
    child, screen = open_chat(llm_server, tmp_path, "--permission-mode", "auto")
    try:
        child.sendline("upper-case the lines")
        screen.wait_text("edit big.txt")
        pressed = time.monotonic()
        child.send("\x1b")
        screen.wait_text("■ aborted")
        assert time.monotonic() - pressed < STOP_BOUND
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert (tmp_path / "big.txt").read_text() == text  # stopped: the file is as it was
