"""Custom commands, skills and plugin tools through a real `di-code run` subprocess against the
loopback model server: what reaches the model is read from the recorded requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import RunDiCode, request_text
from tests.support.extensions import PLUGIN
from tests.support.files import write
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """`~` of the subprocess, so this machine's ~/.claude stays out of the test."""
    home = tmp_path / "user"
    home.mkdir()
    return home


def posted(server: LLMServer) -> list[str]:
    return [request_text(r.body) for r in server.requests if r.method == "POST"]


def test_a_command_file_expands_in_run(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, user_home: Path
) -> None:
    write(
        workspace / ".di-code/commands/fix.md",
        "---\ndescription: Fix an issue\nargument-hint: <issue> <file>\n---\n"
        "Fix issue #$1 in $2. All arguments: $ARGUMENTS\n",
    )
    llm_server.script(Turn(text="fixed"))
    done = run_di_code("run", "/fix 42 src/app.py", env_extra={"HOME": str(user_home)})
    assert (done.returncode, done.stdout, done.stderr) == (0, "fixed\n", "")
    [request] = posted(llm_server)
    assert "Fix issue #42 in src/app.py. All arguments: 42 src/app.py" in request
    assert "/fix" not in request and "argument-hint" not in request


def test_a_slash_prompt_that_names_no_command_is_sent_as_it_is(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, user_home: Path
) -> None:
    bad = write(workspace / ".claude/commands/etc.md", "---\ndescription: 'open\n---\nx\n")
    llm_server.script(Turn(text="a password file"))
    done = run_di_code("run", "/etc/passwd: what is it?", env_extra={"HOME": str(user_home)})
    assert done.returncode == 0, done.stderr
    assert "/etc/passwd: what is it?" in posted(llm_server)[0]
    assert done.stderr == (
        f"di-code: {bad}: skipped: bad front matter: line 2: the quoted value has no closing '\n"
    )


def test_a_skill_is_listed_without_its_body_and_bad_front_matter_warns(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, user_home: Path
) -> None:
    skill = write(
        user_home / ".agents/skills/release/SKILL.md",
        "---\nname: release\ndescription: Cut a release of this project\n---\n"
        "Step one: BUMP-THE-VERSION-7781\n",
    )
    bad = write(workspace / ".claude/skills/broken/SKILL.md", "---\nname: broken\n")
    write(skill.parent / "notes.md", "more notes")
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("read", {"path": str(skill)}, "c1"),)),
        Turn(tool_calls=(ToolCallSpec("read", {"path": str(skill.parent / "notes.md")}, "c2"),)),
        Turn(text="released"),
    )
    done = run_di_code("run", "cut a release", env_extra={"HOME": str(user_home)})
    assert done.returncode == 0, done.stderr
    assert (
        done.stderr
        == f"di-code: {bad}: skipped: bad front matter: the front matter has no closing --- line\n"
    )
    first, second, third = posted(llm_server)
    assert "Cut a release of this project" in first and str(skill) in first
    assert "BUMP-THE-VERSION-7781" not in first
    assert "BUMP-THE-VERSION-7781" in second  # read may read a skill outside the workspace
    assert "more notes" in third


def test_a_tool_from_an_installed_distribution(
    run_di_code: RunDiCode, llm_server: LLMServer, tmp_path: Path, user_home: Path
) -> None:
    site = tmp_path / "site"
    write(site / "shout_plugin.py", PLUGIN)
    write(
        site / "shout_plugin-0.1.dist-info/entry_points.txt",
        "[di_code.tools]\nshout = shout_plugin:Shout\nbroken = shout_plugin:missing\n",
    )
    write(site / "shout_plugin-0.1.dist-info/METADATA", "Name: shout-plugin\nVersion: 0.1\n")
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("shout", {"text": "hello"}, "c1"),)), Turn(text="done")
    )
    env = {"PYTHONPATH": str(site), "HOME": str(user_home)}
    done = run_di_code("run", "--yes", "shout hello", env_extra=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "di-code: plugin broken (shout-plugin): could not load: AttributeError: "
        "module 'shout_plugin' has no attribute 'missing'\n"
    )
    first, second = (r.body for r in llm_server.requests if r.method == "POST")
    assert "shout" in [tool["function"]["name"] for tool in first["tools"]]
    assert "HELLO!" in json.dumps(second["messages"][-1])
