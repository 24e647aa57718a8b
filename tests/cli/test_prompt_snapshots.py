"""What the model sees, kept as reviewed fixtures: the exact system prompt and tool cards of a
few set-ups, captured from the request di-code sends a loopback model. A change to what the
model is told shows up in review as a change to tests/fixtures/prompts/*.txt.

After a deliberate change, `DI_CODE_UPDATE_PROMPTS=1 .venv/bin/pytest
tests/cli/test_prompt_snapshots.py` rewrites the fixtures; read the diff before committing it.
Paths, the date and the OS release are replaced by placeholders so the fixtures hold anywhere.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import RunDiCode
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

FIXTURES = Path(__file__).parent.parent / "fixtures" / "prompts"
SET_UPS = {
    "ask-unsandboxed": ("--permission-mode", "ask", "--sandbox", "off"),
    "auto-sandboxed": ("--permission-mode", "auto", "--sandbox", "workspace-write"),
    "accept-edits": ("--permission-mode", "accept-edits", "--sandbox", "off"),
    "read-only": ("--permission-mode", "read-only", "--sandbox", "off"),
}


def repository(workspace: Path) -> None:
    """A git repository with a root AGENTS.md and a nested one (shown only when worked in)."""
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=workspace, check=True)
    (workspace / "AGENTS.md").write_text("Run the tests with `make test`.\n")
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "AGENTS.md").write_text("In pkg/, keep functions pure.\n")


def seen(body: dict[str, Any], workspace: Path, home: Path) -> str:
    """The request's system prompt and tool cards, with the machine's own parts replaced."""
    system = str(body["messages"][0]["content"])
    tools = [
        f"## {t['function']['name']}\n{t['function']['description']}\n"
        + json.dumps(t["function"]["parameters"], indent=1, sort_keys=True)
        for t in body.get("tools", [])
    ]
    text = "\n\n".join([f"# system\n{system}", *tools]) + "\n"
    text = text.replace(str(workspace), "<WORKSPACE>").replace(str(home), "<HOME>")
    text = re.sub(r"Today's date: \S+", "Today's date: <DATE>", text)
    return text.replace(f"OS: {platform.system()} {platform.release()}", "OS: <OS>")


def check(name: str, text: str) -> None:
    fixture = FIXTURES / f"{name}.txt"
    if os.environ.get("DI_CODE_UPDATE_PROMPTS"):
        fixture.write_text(text)
    assert fixture.exists(), f"no fixture {fixture.name}: run with DI_CODE_UPDATE_PROMPTS=1"
    assert text == fixture.read_text(), f"{fixture.name} differs: review, then update it"


@pytest.mark.parametrize("name", SET_UPS)
def test_the_prompt_and_tools_of_each_set_up_are_as_reviewed(
    name: str, run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    repository(workspace)
    llm_server.script(Turn(text="ok"))
    done = run_di_code("run", *SET_UPS[name], "hi", env_extra={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    check(name, seen(llm_server.requests[-1].body, workspace, di_code_home))


def test_a_read_only_subagent_s_prompt_is_as_reviewed(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    repository(workspace)
    job = {"description": "look", "prompt": "find the tests"}
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("task", job, "t1"),)), Turn(text="found"), Turn(text="ok")
    )
    done = run_di_code("run", "--sandbox", "off", "hi", env_extra={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    check("subagent", seen(llm_server.requests[1].body, workspace, di_code_home))
