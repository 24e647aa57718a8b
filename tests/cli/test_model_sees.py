"""What the model sees, captured from the request di-code sends a loopback model: the rules to
finish, verify and stop at a refusal, the environment block, guidance for every tool and one
rule for background work."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.cli.conftest import RunDiCode
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def sent(run_di_code: RunDiCode, llm_server: LLMServer, *args: str) -> dict[str, Any]:
    llm_server.script(Turn(text="ok"))
    done = run_di_code("run", *args, "hi")
    assert done.returncode == 0, done.stderr
    return llm_server.requests[-1].body


def system_of(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


def card(body: dict[str, Any], name: str) -> str:
    (found,) = [t["function"] for t in body["tools"] if t["function"]["name"] == name]
    return str(found["description"])


def test_the_prompt_says_finish_verify_report_and_stop_when_declined(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    system = system_of(sent(run_di_code, llm_server))
    assert "Keep going until the task is done and checked" in system
    assert "what you could\n  not check" in system
    assert "A declined tool call" in system and "wait for the user" in system


def test_the_environment_block_names_os_shell_branch_status_mode_and_sandbox(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    git(workspace, "init", "-q", "-b", "trunk")
    (workspace / "new.txt").write_text("x\n")
    system = system_of(sent(run_di_code, llm_server, "--sandbox", "off"))
    assert "\nOS: Linux " in system and "\nShell: bash" in system
    status = "Git: branch trunk (no commits yet); 1 changed (as git status --short):\n  ?? new.txt"
    assert status in system
    assert "Permission mode: ask (read, grep, find, ls and todo run; the user approves" in system
    assert "Sandbox: off (bash commands run with the user's rights and network)" in system


def test_a_folder_without_git_says_so_and_a_sandbox_is_named(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    body = sent(run_di_code, llm_server, "--permission-mode", "auto", "--sandbox", "read-only")
    system = system_of(body)
    assert "Git: not a git repository" in system
    assert "Permission mode: auto (every tool runs without asking)" in system
    assert "Sandbox: read-only, network off" in system


def test_every_tool_has_guidance_and_one_rule_for_background_work(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    body = sent(run_di_code, llm_server, "--sandbox", "off")
    system = system_of(body)
    for name in ("fetch", "todo", "task"):
        assert f"\n- {name}: " in system and f"\n- {name}\n" not in system
    unsandboxed = card(body, "bash")
    assert "keeps running after the command returns" in unsandboxed
    assert "ends when the command ends" not in unsandboxed
    sandboxed = card(sent(run_di_code, llm_server, "--sandbox", "workspace-write"), "bash")
    assert "background ones included" in sandboxed
    stand_ins = "one of these that does not exist is an empty read-only stand-in (a device)"
    assert stand_ins in sandboxed and "git status lists it as untracked" in sandboxed
    assert "keeps running" not in sandboxed and "in the background with" not in sandboxed


READS = ("top.py", "pkg/sub/x.py", "pkg/sub/x.py", "pkg/y.py")


def tool_texts(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def test_context_files_have_precedence_and_a_subfolders_come_once_when_the_model_works_there(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("root rule")
    sub = workspace / "pkg" / "sub"
    sub.mkdir(parents=True)
    (workspace / "pkg" / "AGENTS.md").write_text("pkg rule: use tabs")
    (sub / "CLAUDE.md").write_text("sub rule")
    (sub / "x.py").write_text("x = 1\n")
    (workspace / "pkg" / "y.py").write_text("y = 1\n")
    (workspace / "top.py").write_text("t = 1\n")
    reads = [ToolCallSpec("read", {"path": p}, f"r{n}") for n, p in enumerate(READS)]
    llm_server.script(*(Turn(tool_calls=(call,)) for call in reads), Turn(text="done"))
    done = run_di_code("run", "--sandbox", "off", "look")
    assert done.returncode == 0, done.stderr
    first = llm_server.requests[0].body
    system = system_of(first)
    assert "the deeper (more specific) file wins" in system and "root rule" in system
    assert "pkg rule" not in system
    top, deep, again, beside = tool_texts(llm_server.requests[-1].body)
    assert top == "     1\tt = 1"
    pkg = f'<context_file path="{workspace / "pkg" / "AGENTS.md"}">\npkg rule: use tabs\n'
    assert deep.startswith("     1\tx = 1\n") and deep.index(pkg) < deep.index("sub rule")
    assert (again, beside) == ("     1\tx = 1", "     1\ty = 1")  # each file once per session


def test_read_numbers_its_lines_for_lsp_and_edit_is_told_to_leave_the_numbers_out(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """The positions lsp takes are the numbers read shows; what edit matches is the text after
    them, and both cards and the prompt say so."""
    (workspace / "a.py").write_text("import os\n\ndef main():\n    return os.sep\n")
    read = ToolCallSpec("read", {"path": "a.py", "offset": 3}, "r1")
    llm_server.script(Turn(tool_calls=(read,)), Turn(text="done"))
    done = run_di_code("run", "--sandbox", "off", "look")
    assert done.returncode == 0, done.stderr
    body = llm_server.requests[-1].body
    assert tool_texts(body) == ["     3\tdef main():\n     4\t    return os.sep"]
    assert "numbered as `cat -n` prints them" in card(body, "read")
    assert "the lines that offset, grep and lsp name" in card(body, "read")
    assert "never the line number and tab read puts before each line" in card(body, "edit")
    system = system_of(body)
    assert "- read: read a file (text with numbered lines, or an image)" in system
