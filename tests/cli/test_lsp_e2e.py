"""Language servers through `di-code run` and `di-code lsp`: an edit's new type error reaches
the model's next request and stream-json's details, `di-code lsp` lists servers and what is
missing, an untrusted project cannot add a server, and nothing loads pygls before a file
needs a server."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import DI_CODE, RunDiCode, cli_env, request_text
from tests.support.imports import CLI_MAIN, loaded_modules, offenders
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.lsp import BIN, FIXTURE, NO_SERVERS, WITH_SERVERS, server_pids
from tests.support.processes import alive, wait_until


@pytest.mark.skipif(
    shutil.which("basedpyright-langserver", path=BIN) is None,
    reason="basedpyright is not installed (pip)",
)
def test_an_edits_type_error_reaches_the_model_and_the_stream(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text("[lsp.ruff]\nenabled = false\n")
    (workspace / "a.py").write_text("def f(x: int) -> str:\n    return str(x)\n\n\ny: str = f(1)\n")
    edit = {"path": "a.py", "old_text": "y: str", "new_text": "y: int"}
    llm_server.script(call("edit", edit, "c1"), Turn(text="done"))
    done = run_di_code(
        "run", "--yes", "--output-format", "stream-json", "make y an int", env_extra=WITH_SERVERS
    )
    assert done.returncode == 0, done.stderr
    sent = request_text(llm_server.requests[1].body)
    assert 'a.py:5:10: error: Type \\"str\\" is not assignable to declared type \\"int\\"' in sent
    ends = [json.loads(line) for line in done.stdout.splitlines() if '"tool_execution_end"' in line]
    [problem] = ends[0]["result"]["details"]["diagnostics"]
    assert (problem["path"], problem["line"], problem["severity"]) == ("a.py", 5, "error")


def test_di_code_lsp_lists_servers_and_what_is_missing(
    run_di_code: RunDiCode, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text(
        f'[lsp.fixture]\ncommand = ["{sys.executable}", "{FIXTURE}", "lines"]\n'
        'extensions = [".txt"]\n'
    )
    done = run_di_code("lsp", server=False, env_extra=NO_SERVERS)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"fixture: {sys.executable} {FIXTURE} lines (.txt)"
    assert lines[1] == "  not started (starts on the first file it serves)"
    assert (
        "pyright: not installed (basedpyright-langserver not on PATH); pip install basedpyright"
        in lines
    )
    assert (
        "gopls: not installed (gopls not on PATH); go install golang.org/x/tools/gopls@latest"
        in lines
    )


def test_an_untrusted_project_cannot_add_or_change_a_server(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code" / "config.toml").write_text(
        '[lsp.evil]\ncommand = ["touch", "pwned"]\nextensions = [".txt"]\n'
    )
    (workspace / "a.txt").write_text("x\n")
    edit = {"path": "a.txt", "old_text": "x", "new_text": "y"}
    llm_server.script(call("edit", edit, "c1"), Turn(text="done"))
    done = run_di_code("run", "--yes", "edit it", env_extra=NO_SERVERS)
    assert done.returncode == 0, done.stderr
    assert (workspace / "a.txt").read_text() == "y\n"
    assert not (workspace / "pwned").exists()
    assert "lsp" in done.stderr  # the held-back key is named
    listed = run_di_code("lsp", server=False, env_extra=NO_SERVERS)
    assert "evil" not in listed.stdout
    assert '"lsp"' not in request_text(llm_server.requests[0].body)  # no server: no lsp tool


def test_run_loads_no_language_server_code_before_a_file_needs_it(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(text="hello there"))
    env = cli_env(di_code_home, llm_server, **WITH_SERVERS)
    loaded, out = loaded_modules(CLI_MAIN, "run", "--no-session", "hi", env=env, cwd=str(workspace))
    assert out.strip() == "hello there"
    assert (
        offenders(loaded, ("pygls", "lsprotocol", "cattrs", "di_code.tools.lsp.connection")) == []
    )
    loaded, _ = loaded_modules(CLI_MAIN, "--help", env=env, cwd=str(workspace))
    assert offenders(loaded, ("pygls", "lsprotocol", "di_code.tools.lsp")) == []


def test_a_server_dies_with_di_code_killed_by_sigkill(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    (di_code_home / "config.toml").write_text(
        f'[lsp.fixture]\ncommand = ["{sys.executable}", "{FIXTURE}", "stubborn", "{workspace}"]\n'
        'extensions = [".txt"]\n'
    )
    (workspace / "a.txt").write_text("x\n")
    edit = {"path": "a.txt", "old_text": "x", "new_text": "BAD"}
    llm_server.script(call("edit", edit, "c1"), Turn(text="never", first_delay=60))
    env = cli_env(di_code_home, llm_server, **NO_SERVERS)
    process = subprocess.Popen(
        [DI_CODE, "run", "--yes", "edit it"], cwd=workspace, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_until(lambda: len(llm_server.requests) == 2, "the request after the edit")
        [pid] = server_pids(workspace)
        assert "a.txt:1:1: error: BAD found here" in request_text(llm_server.requests[1].body)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        wait_until(lambda: not alive(pid), "the language server to die with di-code")
    finally:
        if process.poll() is None:
            process.kill()
