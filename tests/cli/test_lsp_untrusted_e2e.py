"""The issue's attack on a real `di-code run`: an untrusted repository whose `.venv/bin/python`
is a program of its own. basedpyright runs that file to find the imports, so read-only mode
starts no server (the lsp tool is not offered, as Permissions says), and in auto mode the
server is pinned to di-code's interpreter and runs in the sandbox: the program never runs."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import RunDiCode, request_text
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.lsp import BIN, FIXTURE, NO_SERVERS, WITH_SERVERS

needs_basedpyright = pytest.mark.skipif(
    shutil.which("basedpyright-langserver", path=BIN) is None,
    reason="basedpyright is not installed (pip)",
)


def hostile_repository(workspace: Path, outside: Path) -> Path:
    """The repository, and where its program leaves a mark when it runs."""
    mark = outside / "ran"
    program = workspace / ".venv" / "bin" / "python"
    program.parent.mkdir(parents=True)
    program.write_text(f'#!/bin/sh\necho ran >> {mark}\nexec python3 "$@"\n')
    program.chmod(0o755)
    (workspace / ".git").mkdir()
    (workspace / "app.py").write_text("import os\nvalue: int = 1\n")
    return mark


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


@needs_basedpyright
def test_read_only_mode_offers_no_lsp_tool_and_runs_nothing(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, outside: Path
) -> None:
    mark = hostile_repository(workspace, outside)
    symbols = {"operation": "symbols", "path": "app.py"}
    llm_server.script(call("lsp", symbols, "c1"), Turn(text="done"))
    done = run_di_code(
        "run", "--permission-mode", "read-only", "list the symbols", env_extra=WITH_SERVERS
    )
    assert done.returncode == 0, done.stderr
    offered = request_text(llm_server.requests[0].body)
    assert '"read"' in offered and '"lsp"' not in offered
    assert 'Unknown tool \\"lsp\\"' in request_text(llm_server.requests[1].body)
    assert not mark.exists()


@needs_basedpyright
def test_auto_mode_edits_with_diagnostics_and_never_runs_the_projects_interpreter(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, outside: Path
) -> None:
    mark = hostile_repository(workspace, outside)
    edit = {"path": "app.py", "old_text": "value: int = 1", "new_text": 'value: int = "one"'}
    llm_server.script(call("edit", edit, "c1"), Turn(text="done"))
    done = run_di_code(
        "run", "--yes", "--sandbox", "workspace-write", "break it", env_extra=WITH_SERVERS
    )
    assert done.returncode == 0, done.stderr
    sent = request_text(llm_server.requests[1].body)
    assert "app.py:2:14: error" in sent  # the server ran, and answered
    assert not mark.exists()


def test_without_bubblewrap_servers_run_unsandboxed(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text(
        f'[lsp.fixture]\ncommand = ["{sys.executable}", "{FIXTURE}", "lines"]\n'
        'extensions = [".txt"]\n'
    )
    (workspace / "a.txt").write_text("fine\n")
    edit = {"path": "a.txt", "old_text": "fine", "new_text": "BAD"}
    llm_server.script(call("edit", edit, "c1"), Turn(text="done"))
    done = run_di_code("run", "--yes", "go", env_extra=NO_SERVERS)  # no bwrap on PATH
    assert done.returncode == 0, done.stderr
    assert "a.txt:1:1: error: BAD found here" in request_text(llm_server.requests[1].body)
