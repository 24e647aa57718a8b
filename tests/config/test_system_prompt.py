"""The default system prompt: tools, workspace, date and context files in the right order."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from di_code.config.system_prompt import (
    CONTEXT_FILE_CAP,
    build_system_prompt,
    context_files,
    prompt_text,
)


def test_prompt_names_tools_workspace_and_date(tmp_path: Path) -> None:
    text = build_system_prompt(
        tool_names=["read", "bash"],
        workspace=tmp_path,
        home=tmp_path / "home",
        today=date(2025, 3, 4),
        extra_roots=[Path("/extra")],
    )
    assert text.startswith("You are di-code")
    assert "- read: read a file" in text and "- bash: run a shell command" in text
    assert "- edit:" not in text
    assert f"Workspace: {tmp_path}\nAlso allowed: /extra" in text
    assert "Today's date: 2025-03-04" in text


def test_context_files_from_home_and_root_down_agents_before_claude(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    workspace = repo / "pkg" / "sub"
    workspace.mkdir(parents=True)
    home.mkdir()
    (repo / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("above the repository: never read")
    (home / "CLAUDE.md").write_text("home rules")
    (repo / "AGENTS.md").write_text("repo rules")
    (repo / "CLAUDE.md").write_text("repo claude: AGENTS.md wins")
    (repo / "pkg" / "CLAUDE.md").write_text("pkg rules")
    (workspace / "AGENTS.md").write_text("x" * (CONTEXT_FILE_CAP + 10))
    found = context_files(home, workspace)
    assert [path for path, _ in found] == [
        home / "CLAUDE.md",
        repo / "AGENTS.md",
        repo / "pkg" / "CLAUDE.md",
        workspace / "AGENTS.md",
    ]
    assert found[3][1] == "x" * CONTEXT_FILE_CAP + "\n[truncated at 64 KB]"
    prompt = build_system_prompt(tool_names=[], workspace=workspace, home=home, today=date.today())
    assert prompt.index("home rules") < prompt.index("repo rules") < prompt.index("pkg rules")
    assert f'<context_file path="{repo / "AGENTS.md"}">\nrepo rules\n</context_file>' in prompt


def test_workspace_without_repository_reads_only_itself(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("outer")
    workspace = tmp_path / "w"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("inner")
    assert [text for _, text in context_files(tmp_path / "nohome", workspace)] == ["inner"]


def test_prompt_text_reads_a_file_or_keeps_the_text(tmp_path: Path) -> None:
    path = tmp_path / "prompt.md"
    path.write_text("from a file")
    assert prompt_text(str(path)) == "from a file"
    assert prompt_text("Be terse.") == "Be terse."


def test_an_agent_that_can_change_nothing_is_not_told_to_test_its_changes(tmp_path: Path) -> None:
    def prompt(names: list[str], subagent: bool = False) -> str:
        today = date.today()
        return build_system_prompt(
            tool_names=names, workspace=tmp_path, home=tmp_path, today=today, subagent=subagent
        )

    changing = prompt(["read", "edit", "bash"])
    assert "Keep going until the task is done and checked" in changing
    for reading in (prompt(["read", "grep"]), prompt(["read", "grep"], subagent=True)):
        assert "run the project's tests" not in reading and "Keep going" not in reading
    assert "write, edit and bash are not available here" in prompt(["read", "grep"])
    assert "run the project's tests" in prompt(["read", "bash"], subagent=True)


def test_lsp_positions_are_read_s_line_numbers(tmp_path: Path) -> None:
    text = build_system_prompt(
        tool_names=["read", "edit", "lsp"], workspace=tmp_path, home=tmp_path, today=date.today()
    )
    assert "positions are 1-based line and character, as read's line numbers" in text
    assert "never holds read's line numbers" in text
