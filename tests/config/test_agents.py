"""Custom subagent files: where they are found, which one wins, and how Claude Code's front
matter (tool names, model aliases, list forms) is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.config.agents import load_agents, tool_names
from tests.support.files import write


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        ("Read, Grep, Glob", ("read", "grep", "find")),
        ("[Read, WebFetch, TodoWrite]", ("read", "fetch", "todo")),
        ("- Edit\n- MultiEdit\n- Bash", ("edit", "bash")),
        ("read,  mcp_server_tool", ("read", "mcp_server_tool")),
        ("", ()),
    ],
)
def test_claude_code_tool_names_become_di_code_s(raw: str, names: tuple[str, ...]) -> None:
    assert tool_names(raw) == names


def test_the_nearest_file_wins_and_front_matter_is_read(tmp_path: Path, user_home: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "repo" / "sub"
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    write(
        workspace / ".di-code" / "agents" / "review.md",
        "---\nname: reviewer\ndescription: >\n  Reviews code\n  for bugs\ntools: Read, Glob\n"
        "model: openai/small\n---\nBe careful.\n",
    )
    other = write(
        tmp_path / "repo" / ".claude" / "agents" / "other.md", "---\nname: reviewer\n---\nNo."
    )
    write(home / "agents" / "scout.md", "# Looks around the code\nThen reports.\n")
    found = load_agents(home, workspace)
    assert found.warnings == (f"{other}: skipped: subagent reviewer is already defined",)
    reviewer, scout = found.agents["reviewer"], found.agents["scout"]
    assert (reviewer.description, reviewer.tools, reviewer.model) == (
        "Reviews code for bugs",
        ("read", "find"),
        "openai/small",
    )
    assert reviewer.prompt == "Be careful."
    assert (scout.description, scout.tools, scout.model) == ("Looks around the code", None, None)


@pytest.mark.parametrize("model", ["inherit", "sonnet", "Opus", "haiku", ""])
def test_claude_code_model_aliases_mean_the_default_model(
    tmp_path: Path, user_home: Path, model: str
) -> None:
    write(tmp_path / ".claude" / "agents" / "a.md", f"---\nname: a\nmodel: {model}\n---\nGo.")
    assert load_agents(tmp_path / "home", tmp_path).agents["a"].model is None


def test_bad_files_are_one_warning_each(tmp_path: Path, user_home: Path) -> None:
    bad = write(tmp_path / ".claude" / "agents" / "bad.md", '---\nname: "unclosed\n---\nx')
    odd = write(tmp_path / ".claude" / "agents" / "odd.md", "---\nname: has space\n---\nx")
    twin = write(tmp_path / ".claude" / "agents" / "twin.md", "---\nname: r\u0435viewer\n---\nx")
    found = load_agents(tmp_path / "home", tmp_path)
    assert found.agents == {}
    assert found.warnings == (
        f'{bad}: skipped: bad front matter: line 2: the quoted value has no closing "',
        f"{odd}: skipped: 'has space' is not a usable subagent name",
        f"{twin}: skipped: 'r\u0435viewer' is not a usable subagent name",
    )
