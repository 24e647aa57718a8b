"""`di-code run` on a terminal in ask mode: its live progress on stderr never draws over a
question (before, the first question was garbled by the spinner and the second never showed)."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.support.chat import DI_CODE, needs_di_code, spawn_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen


def question(command: str) -> str:
    return f"Allow? [y]es / [a] yes, don't ask again for {command} / [N]o, or type what to do"


@needs_di_code
def test_both_approval_questions_are_whole_on_the_screen(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "echo first-ran"}, "c1"),)),
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "echo second-ran"}, "c2"),)),
        Turn(text="Both ran."),
    )
    child = pexpect.spawn(
        str(DI_CODE),
        ["run", "--model", "openai/test-model", "run two commands"],
        cwd=str(tmp_path),
        env=spawn_env(llm_server),
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=20,
    )
    screen = Screen(child, 30)
    try:
        screen.wait_for(question("echo first-ran"))
        lines = screen.pump(0.5)
        assert "? bash: echo first-ran" in lines
        assert any(line.startswith(question("echo first-ran")) for line in lines)
        child.sendline("y")
        screen.wait_for(question("echo second-ran"))
        lines = screen.pump(0.5)
        assert any(
            line.startswith(question("echo first-ran")) and line.endswith(" y") for line in lines
        )
        assert "? bash: echo second-ran" in lines
        child.sendline("y")
        lines = screen.wait_for("Both ran.")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert any(
        line.startswith(question("echo second-ran")) and line.endswith(" y") for line in lines
    )
