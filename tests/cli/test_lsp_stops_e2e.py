"""A stop never waits for a language server: SIGTERM or Ctrl-C while a server has not
answered `initialize` (startup_timeout 60 s), or while it sits on a hover, ends `run` at once
(it used to take 58 s and 9.1 s)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.lsp import FIXTURE
from tests.support.processes import SAFETY_TIMEOUT, wait_until

BOUND = 5.0
"""Seconds within which the run must be gone (generous: the machine is shared)."""


def start_run(
    llm_server: LLMServer, home: Path, workspace: Path, mode: str, turn: Turn
) -> subprocess.Popen[str]:
    (home / "config.toml").write_text(
        f'[lsp.fixture]\ncommand = ["{sys.executable}", "{FIXTURE}", "{mode}"]\n'
        'extensions = [".txt"]\nstartup_timeout = 60\n'
    )
    (workspace / "a.txt").write_text("fine\n")
    llm_server.script(turn, Turn(text="done"))
    marks = Path.home() / ".cache" / "marks"  # the server's own cache, as it sees it
    env = cli_env(home, llm_server, DI_CODE_LSP="on", LSP_FIXTURE_STARTS=str(marks))
    return subprocess.Popen(
        [DI_CODE, "run", "--yes", "go"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stopped_within(process: subprocess.Popen[str], number: signal.Signals) -> float:
    began = time.monotonic()
    process.send_signal(number)
    process.communicate(timeout=SAFETY_TIMEOUT)
    return time.monotonic() - began


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_while_a_server_has_not_answered_initialize_ends_run_at_once(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path, number: signal.Signals
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    edit = {"path": "a.txt", "old_text": "fine", "new_text": "BAD"}
    process = start_run(llm_server, di_code_home, workspace, "silent", call("edit", edit, "c1"))
    marks = di_code_home / "lsp-cache" / "fixture.untrusted" / "marks"
    try:
        wait_until(lambda: marks.exists(), "the server started")
        assert stopped_within(process, number) < BOUND
    finally:
        process.kill()
        process.communicate()
    assert (workspace / "a.txt").read_text() == "fine\n"  # stopped before the edit


def test_sigterm_during_a_hover_to_a_wedged_server_ends_run_at_once(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    hover = {"operation": "hover", "path": "a.txt", "line": 1, "character": 1}
    process = start_run(llm_server, di_code_home, workspace, "wedged", call("lsp", hover, "c1"))
    marks = di_code_home / "lsp-cache" / "fixture.untrusted" / "marks"
    try:
        wait_until(lambda: marks.exists() and "hover" in marks.read_text(), "the hover asked")
        assert stopped_within(process, signal.SIGTERM) < BOUND
    finally:
        process.kill()
        process.communicate()
