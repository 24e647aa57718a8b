"""`di-code acp` driven over its standard input by JSON-RPC lines, and the stub language server
its tests configure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import cli_env
from tests.support.imports import CLI_MAIN, when_main_ends

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")
from tests.support.acp_editor import TIMEOUT


def request(number: int, method: str, **params: object) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params})


def run_acp(lines: list[str], home: Path, modules: Path) -> list[dict[str, Any]]:
    """`di-code acp` given `lines`: its answers, one a line, in order; its input is closed
    once each line is answered. The modules it had loaded when its main thread ended are
    written to `modules`."""
    report = f"open({str(modules)!r}, 'w').write(__import__('json').dumps(sorted(sys.modules)))"
    prelude = "import sys\n" + when_main_ends(report)
    process = subprocess.Popen(
        [sys.executable, "-c", prelude + CLI_MAIN, "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=cli_env(home, None),
        cwd=home,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(line + "\n" for line in lines).encode())
    process.stdin.flush()
    answers = [json.loads(process.stdout.readline()) for _ in lines]
    process.stdin.close()
    assert process.wait(TIMEOUT) == 0
    return answers


BIN = str(Path(sys.executable).parent)
"""Where the dev extra installs basedpyright."""


@pytest.fixture
def stub_gopls(tmp_path: Path) -> Path:
    """A folder with a `gopls` that is never started here: finding it is enough for write and
    edit to be wrapped for diagnostics."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "gopls"
    program.write_text("#!/bin/sh\nexit 1\n")
    program.chmod(0o755)
    return folder


def server_env(servers: str, stub_gopls: Path, home: Path) -> dict[str, str]:
    """The environment's part that makes the language servers `servers`."""
    path = os.environ["PATH"]
    if servers == "off":
        return {"DI_CODE_LSP": "off"}
    if servers == "found":
        return {"DI_CODE_LSP": "on", "PATH": f"{stub_gopls}{os.pathsep}{path}"}
    if shutil.which("basedpyright-langserver", path=BIN) is None:
        pytest.skip("basedpyright is not installed (the dev extra installs it)")
    (home / "config.toml").write_text("[lsp.ruff]\nenabled = false\n")  # one server is enough
    return {"DI_CODE_LSP": "on", "PATH": f"{BIN}{os.pathsep}{path}"}
