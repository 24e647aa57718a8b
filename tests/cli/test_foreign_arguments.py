"""A model trained on Claude Code's or Codex's tools, in a real `di-code run`: its names for the
same arguments (`file_path`, `old_string`/`new_string`, `replace_all`, opencode's camelCase, a
plan's `completed`, Codex's `plan` of `step`s) are taken."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from di_code.ai import ToolArgumentsError, validate_tool_arguments
from di_code.tools.builtin.cards import EDIT, TODO
from tests.cli.conftest import RunDiCode, request_text
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


@dataclass(frozen=True)
class OpenTool:
    """A tool whose schema has `file_path` itself and takes any other name."""

    name: str = "open"
    parameters: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {"file_path": {"type": "string"}}}
    )


def run_calls(run_di_code: RunDiCode, llm_server: LLMServer, *calls: ToolCallSpec) -> Any:
    llm_server.script(*(Turn(tool_calls=(call,)) for call in calls), Turn(text="ok"))
    return run_di_code("run", "--permission-mode", "auto", "--sandbox", "off", "go")


CHANGE_B = {"file_path": "b.py", "old_string": "3", "new_string": "4"}


def test_claude_codes_file_arguments_are_taken(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\nprint(x)\n")
    done = run_calls(
        run_di_code,
        llm_server,
        ToolCallSpec("read", {"file_path": "a.py"}),
        ToolCallSpec("edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}),
        ToolCallSpec("write", {"file_path": "b.py", "content": "y = 3\n"}),
        ToolCallSpec("edit", {**CHANGE_B, "replace_all": False}),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (workspace / "a.py").read_text() == "x = 2\nprint(x)\n"
    assert (workspace / "b.py").read_text() == "y = 4\n"
    assert "print(x)" in request_text(llm_server.requests[1].body)  # the read's result
    assert "Invalid arguments" not in request_text(llm_server.requests[-1].body)


def test_a_plan_in_claude_codes_and_codexs_words_is_taken(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    claude = {"content": "read", "status": "completed", "activeForm": "Reading"}
    codex = {
        "explanation": "two steps",
        "plan": [{"step": "read", "status": "completed"}, {"step": "fix", "status": "in_progress"}],
    }
    done = run_calls(
        run_di_code,
        llm_server,
        ToolCallSpec("todo", {"todos": [claude, {"content": "fix", "status": "pending"}]}),
        ToolCallSpec("todo", codex),
        ToolCallSpec("todo", {"todos": [{"content": "old words", "status": "done"}]}),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Plan: 1/2 done\n[x] read\n[ ] fix" in done.stderr
    assert "Plan: 1/2 done\n[x] read\n[>] fix" in done.stderr
    assert "Plan: 1/1 done\n[x] old words" in done.stderr


def test_replace_all_in_claude_codes_and_opencodes_words_replaces_every_occurrence(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "a.py").write_text("a a\n")
    (workspace / "b.py").write_text("c c\n")
    claude = {"file_path": "a.py", "old_string": "a", "new_string": "b", "replace_all": True}
    opencode = {"filePath": "b.py", "oldString": "c", "newString": "d", "replaceAll": True}
    done = run_calls(
        run_di_code, llm_server, ToolCallSpec("edit", claude), ToolCallSpec("edit", opencode)
    )
    assert done.returncode == 0, done.stderr
    assert "Invalid arguments" not in request_text(llm_server.requests[-1].body)
    assert (workspace / "a.py").read_text() == "b b\n"
    assert (workspace / "b.py").read_text() == "d d\n"


def test_a_foreign_name_is_not_taken_beside_the_tools_own_or_where_the_tool_has_it() -> None:
    both = {"path": "a", "file_path": "b", "old_text": "x", "new_text": "y"}
    with pytest.raises(ToolArgumentsError, match="'file_path' was unexpected"):
        validate_tool_arguments(EDIT, both)

    assert validate_tool_arguments(OpenTool(), {"file_path": "a"}) == {"file_path": "a"}
    plan = validate_tool_arguments(TODO, {"plan": [{"step": "s", "status": "completed"}]})
    assert plan == {"todos": [{"content": "s", "status": "completed"}]}
