"""Claude Code's `.claude/settings.json` hooks in a real `di-code run`: they never run before
the user trusts the project, run after `di-code trust` (Claude Code's tool names in matchers
work), events di-code lacks are skipped with a warning, and a changed file needs trust again."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import RunDiCode, request_text
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


def claude_settings(workspace: Path, hooks: dict[str, object]) -> Path:
    folder = workspace / ".claude"
    folder.mkdir(exist_ok=True)
    path = folder / "settings.json"
    path.write_text(json.dumps({"permissions": {"allow": ["Bash(ls:*)"]}, "hooks": hooks}))
    return path


def refusing(script: Path, matcher: str) -> dict[str, object]:
    hook = {"type": "command", "command": f"bash {script}"}
    return {"PreToolUse": [{"matcher": matcher, "hooks": [hook]}]}


def test_claude_settings_hooks_run_only_once_the_project_is_trusted(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "no.sh"
    script.write_text("echo 'not in this repo' >&2\nexit 2\n")
    claude_settings(workspace, refusing(script, "Bash"))
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "touch before.txt"}),)),
        Turn(text="ok"),
    )
    untrusted = run_di_code("run", "--yes", "make it")
    assert untrusted.returncode == 0, untrusted.stderr
    assert (workspace / "before.txt").exists()  # the hook did not run
    assert "settings.json: its hooks run once you trust the project" in untrusted.stderr

    trusted = run_di_code("trust")
    assert trusted.returncode == 0, trusted.stderr
    assert "settings.json as it is now: its hooks may run" in trusted.stdout
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "touch after.txt"}),)),
        Turn(text="ok"),
    )
    done = run_di_code("run", "--yes", "make it")
    assert done.returncode == 0, done.stderr
    assert not (workspace / "after.txt").exists()
    assert "not in this repo" in request_text(llm_server.requests[-1].body)


def test_claude_tool_names_and_unknown_events_in_a_trusted_file(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "seen.json"
    hooks = refusing(tmp_path / "unused.sh", "Glob")
    hooks["PreToolUse"][0]["hooks"][0]["command"] = f"cat > {seen}; exit 2"  # type: ignore[index]
    hooks["SubagentStop"] = [{"hooks": [{"type": "command", "command": "true"}]}]
    claude_settings(workspace, hooks)
    assert run_di_code("trust").returncode == 0
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("find", {"pattern": "*.txt"}),)), Turn(text="ok")
    )
    done = run_di_code("run", "--yes", "look")
    assert done.returncode == 0, done.stderr
    assert "hooks.SubagentStop is not a hook event" in done.stderr
    event = json.loads(seen.read_text())
    assert event["tool_name"] == "find"  # matched by Claude Code's name for it, Glob


def test_a_changed_claude_settings_file_is_not_trusted_any_more(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    path = claude_settings(workspace, {})
    assert run_di_code("trust").returncode == 0
    hook = {"hooks": [{"type": "command", "command": f"touch {marker}"}]}
    path.write_text(json.dumps({"hooks": {"UserPromptSubmit": [hook]}}))
    llm_server.script(Turn(text="hello"))
    done = run_di_code("run", "hi")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "its hooks run once you trust the project" in done.stderr
