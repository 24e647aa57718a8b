"""Permission modes end to end: what the model may run, and what it is told when it may not."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import RunDiCode, request_text
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


def touch_then_answer(server: LLMServer) -> None:
    server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "touch made.txt"}),)),
        Turn(text="finished"),
    )


def tool_names(body: dict[str, object]) -> set[str]:
    tools = body.get("tools") or []
    assert isinstance(tools, list)
    return {tool["function"]["name"] for tool in tools}


def test_ask_without_a_terminal_denies_and_the_model_sees_why(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    touch_then_answer(llm_server)
    done = run_di_code("run", "make a file")
    assert (done.returncode, done.stdout) == (0, "finished\n")
    assert not (workspace / "made.txt").exists()
    assert "no terminal to ask" in request_text(llm_server.requests[-1].body)


def test_yes_runs_them(run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path) -> None:
    touch_then_answer(llm_server)
    assert run_di_code("run", "--yes", "make a file").returncode == 0
    assert (workspace / "made.txt").exists()


def test_read_only_offers_no_write_edit_or_bash(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("write", {"path": "w.txt", "content": "x"}),)),
        Turn(text="could not"),
    )
    done = run_di_code("run", "--permission-mode", "read-only", "--yes", "write")
    assert done.returncode == 0, done.stderr
    assert not (workspace / "w.txt").exists()
    first = llm_server.requests[0].body
    assert tool_names(first) == {"read", "grep", "find", "ls", "todo", "task"}
    assert 'Unknown tool \\"write\\"' in request_text(llm_server.requests[-1].body)


def test_deny_rule_wins_over_allow_rule(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text(
        '[permissions]\nallow = ["bash"]\ndeny = ["bash:touch"]\n'
    )
    touch_then_answer(llm_server)
    assert run_di_code("run", "make a file").returncode == 0
    assert not (workspace / "made.txt").exists()
    assert "deny rule" in request_text(llm_server.requests[-1].body)


def test_allow_rule_lets_a_command_run_in_ask_mode(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text('[permissions]\nallow = ["bash:touch"]\n')
    touch_then_answer(llm_server)
    assert run_di_code("run", "make a file").returncode == 0
    assert (workspace / "made.txt").exists()


def test_tools_flag_limits_the_offer_and_rejects_unknown_names(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(text="ok"))
    assert run_di_code("run", "--tools", "read,ls", "hi").returncode == 0
    assert tool_names(llm_server.requests[-1].body) == {"read", "ls"}
    bad = run_di_code("run", "--tools", "read,teleport", "hi")
    assert bad.returncode == 2 and "unknown tool 'teleport'" in bad.stderr


def test_accept_edits_runs_write_and_still_asks_for_bash(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("write", {"path": "w.txt", "content": "x"}),)),
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "touch made.txt"}),)),
        Turn(text="finished"),
    )
    done = run_di_code("run", "--permission-mode", "accept-edits", "write then touch")
    assert done.returncode == 0, done.stderr
    assert (workspace / "w.txt").read_text() == "x"
    assert not (workspace / "made.txt").exists()
    assert "no terminal to ask" in request_text(llm_server.requests[-1].body)


def test_an_allow_rule_does_not_run_an_expansion_payload(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text('[permissions]\nallow = ["bash:echo"]\n')
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "echo ${x:=$'\\x24(touch P)'}${x@P}"}),)),
        Turn(text="finished"),
    )
    assert run_di_code("run", "echo it").returncode == 0
    assert not (workspace / "P").exists()
    assert "needs the user's approval" in request_text(llm_server.requests[-1].body)
