"""`run` shows a call sent in Claude Code's argument names (`file_path`, `old_string`,
`new_string`) as the same call in di-code's own names (issue 42.1): its path in the JSON
events, and undo finds the file it changed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import RunDiCode
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

EDIT = {"file_path": "notes.txt", "old_string": "one", "new_string": "uno"}
WRITE = {"file_path": "new.txt", "content": "fresh\n"}


def script(server: LLMServer) -> None:
    server.script(
        Turn(tool_calls=(ToolCallSpec("edit", EDIT, "e1"), ToolCallSpec("write", WRITE, "w1"))),
        Turn(text="done"),
    )


def test_the_stream_names_the_path_of_an_aliased_call(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("one\ntwo\n")
    script(llm_server)
    result = run_di_code("run", "--yes", "--output-format", "stream-json", "go")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    started = [e for e in events if e.get("type") == "tool_execution_start"]
    assert [e["arguments"] for e in started] == [
        {"path": "notes.txt", "old_text": "one", "new_text": "uno"},
        {"path": "new.txt", "content": "fresh\n"},
    ]
    assert (workspace / "notes.txt").read_text() == "uno\ntwo\n"


def test_undo_knows_the_file_of_an_aliased_call(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("one\ntwo\n")
    script(llm_server)
    result = run_di_code("run", "--yes", "go")
    assert result.returncode == 0, result.stderr
    undone = run_di_code("undo", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert (workspace / "notes.txt").read_text() == "one\ntwo\n"
    assert not (workspace / "new.txt").exists()
