"""First-use imports of the language-server client: a `di-code run` whose edit starts a
language server imports pygls, lsprotocol and cattrs (~0.5 s) off the event loop, through
di_code.system.first_use, as the import spy of tests/test_guarded_first_use.py sees it."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.cli.conftest import cli_env, request_text
from tests.support.first_use import guarded, imports, spied_run
from tests.support.llm_server import LLMServer
from tests.support.wire import ToolCallSpec, Turn

FIXTURE = Path(__file__).parent / "support" / "lsp_fixture_server.py"


def test_a_language_servers_start_imports_its_client_off_the_loop(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "a.txt").write_text("x\n", encoding="utf-8")
    (di_code_home / "config.toml").write_text(
        f'[lsp.fixture]\ncommand = ["{sys.executable}", "{FIXTURE}", "lines"]\n'
        'extensions = [".txt"]\n'
    )
    edit = {"path": "a.txt", "old_text": "x", "new_text": "BAD"}
    llm_server.script(Turn(tool_calls=(ToolCallSpec("edit", edit, "call-1"),)), Turn(text="edited"))
    env = cli_env(di_code_home, llm_server, DI_CODE_LSP="on")
    result, lines = spied_run(["run", "--yes", "edit a.txt"], workspace, env)
    assert result.returncode == 0, result.stderr
    assert "a.txt:1:1: error: BAD found here" in request_text(llm_server.requests[1].body)
    seen = imports(lines)
    assert "lsprotocol.types" in seen  # the server was spoken to: the spy saw its client come
    client = {"di_code.tools.lsp.connection", "di_code.tools.lsp.converter"}
    on_loop = [name for name, where in seen.items() if where == "loop" and guarded(name, client)]
    assert on_loop == []
