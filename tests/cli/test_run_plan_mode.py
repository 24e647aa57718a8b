"""`di-code run --permission-mode plan` in a real process (issue 44.1): the model explores with
the reading tools only, every tool that would change something is refused, and the plan it
presents is the run's answer (text and json); exit 0, the workspace as it was."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import RunDiCode, WriteHook, request_text
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

PLAN = "## Rename the greeting\n\n1. Change `hello` to `hi` in app.py\n2. Run the tests\n"


def planning_model(server: LLMServer) -> None:
    """Reads, tries to write and to run a command (refused), then presents its plan."""
    server.script(
        Turn(tool_calls=(ToolCallSpec("read", {"path": "app.py"}, "r1"),)),
        Turn(
            tool_calls=(
                ToolCallSpec("write", {"path": "app.py", "content": "changed\n"}, "w1"),
                ToolCallSpec("bash", {"command": "touch made-by-bash"}, "b1"),
            )
        ),
        Turn(tool_calls=(ToolCallSpec("exit_plan_mode", {"plan": PLAN}, "p1"),)),
        Turn(text="The plan is ready for your review."),
    )


def offered(body: dict[str, object]) -> set[str]:
    tools = body.get("tools")
    assert isinstance(tools, list)
    return {tool["function"]["name"] for tool in tools}


def test_a_plan_run_prints_the_plan_and_changes_nothing(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "app.py").write_text("print('hello')\n")
    planning_model(llm_server)
    done = run_di_code("run", "--permission-mode", "plan", "rename the greeting")
    assert done.returncode == 0, done.stderr
    assert done.stdout == PLAN + "\n"
    assert (workspace / "app.py").read_text() == "print('hello')\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["app.py"]
    first = offered(llm_server.requests[0].body)
    assert {"read", "grep", "find", "ls", "exit_plan_mode"} <= first
    assert not first & {"write", "edit", "bash", "fetch"}
    refused = request_text(llm_server.requests[2].body)
    assert "write is not available in plan mode" in refused
    assert "bash is not available in plan mode" in refused
    told = request_text(llm_server.requests[3].body)
    assert "the user reviews it once this run has ended" in told


def test_a_plan_runs_json_result_is_the_plan(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "app.py").write_text("print('hello')\n")
    planning_model(llm_server)
    done = run_di_code(
        "run", "--permission-mode", "plan", "--output-format", "json", "rename the greeting"
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["is_error"], result["result"]) == (False, PLAN)
    assert (workspace / "app.py").read_text() == "print('hello')\n"


def test_the_plan_tool_is_offered_in_plan_mode_only(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(Turn(text="hi"))
    done = run_di_code("run", "--permission-mode", "ask", "hello")
    assert done.returncode == 0, done.stderr
    tools = offered(llm_server.requests[0].body)
    assert "write" in tools and "exit_plan_mode" not in tools
    assert "exit_plan_mode" not in request_text(llm_server.requests[0].body["messages"])


def test_a_hook_matcher_names_the_plan_tool_as_claude_code_does(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    tmp_path: Path,
    user_hook: WriteHook,
) -> None:
    seen = tmp_path / "seen.json"
    user_hook("PreToolUse", "log.sh", f"cat > {seen}\n", matcher="ExitPlanMode")
    (workspace / "app.py").write_text("print('hello')\n")
    planning_model(llm_server)
    done = run_di_code("run", "--permission-mode", "plan", "rename the greeting")
    assert done.returncode == 0, done.stderr
    event = json.loads(seen.read_text())
    assert (event["tool_name"], event["tool_input"]["plan"]) == ("exit_plan_mode", PLAN)
    assert done.stdout == PLAN + "\n"
