"""The model's plan in a real `di-code run`: it needs no approval, and without a terminal the
plan is printed on stderr each time it changes."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import RunDiCode, request_text
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.todo import STEPS


def test_run_prints_the_plan_on_stderr_and_it_needs_no_approval(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("todo", {"todos": STEPS}),)), Turn(text="on it")
    )
    done = run_di_code("run", "fix the parser")  # ask mode, no terminal: todo asks nobody
    assert done.returncode == 0 and done.stdout == "on it\n"
    assert "Plan: 1/3 done\n[x] read the parser\n[>] fix the bug\n[ ] add a test" in done.stderr
    assert "Plan: 1/3 done" in request_text(llm_server.requests[-1].body)
