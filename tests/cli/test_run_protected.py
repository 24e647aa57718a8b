"""Protected paths and hidden files on a real `di-code run`: the settings reach the gate and
the sandbox."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import RunDiCode, request_text
from tests.support.bubblewrap import needs_bubblewrap
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


def test_accept_edits_asks_before_writing_a_protected_path(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("write", {"path": "w.txt", "content": "x"}),)),
        Turn(tool_calls=(ToolCallSpec("write", {"path": ".mcp.json", "content": "{}"}),)),
        Turn(text="finished"),
    )
    done = run_di_code("run", "--permission-mode", "accept-edits", "write twice")
    assert done.returncode == 0, done.stderr
    assert (workspace / "w.txt").read_text() == "x"
    assert not (workspace / ".mcp.json").exists()
    said = request_text(llm_server.requests[-1].body)
    assert "the MCP servers di-code starts" in said and "no terminal to ask" in said


@needs_bubblewrap
def test_sandbox_hide_from_the_settings_reaches_the_command(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    (workspace / "keys.txt").write_text("k3y\n")
    (di_code_home / "config.toml").write_text(f'[sandbox]\nhide = ["{workspace}/keys.txt"]\n')
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "cat keys.txt; echo MARK-$((6*7))"}),)),
        Turn(text="done"),
    )
    done = run_di_code("run", "--yes", "--sandbox", "workspace-write", "read it")
    assert done.returncode == 0, done.stderr
    said = request_text(llm_server.requests[-1].body)
    assert "MARK-42" in said and "k3y" not in said
