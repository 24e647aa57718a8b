"""One limit for every model request a prompt causes (issue 32, requests): a subagent's
requests and compaction's count against `--max-turns` as the main agent's do, and the JSON
output says what it counts."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import RunDiCode
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

PARALLEL_TASKS = 25


def posts(llm_server: LLMServer) -> int:
    return len([request for request in llm_server.requests if request.method == "POST"])


def test_parallel_subagents_cannot_multiply_the_limit(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    calls = tuple(
        ToolCallSpec("task", {"description": f"job {n}", "prompt": f"look at part {n}"}, f"t{n}")
        for n in range(PARALLEL_TASKS)
    )
    llm_server.script(
        Turn(tool_calls=calls), *[Turn(text="a part")] * PARALLEL_TASKS, Turn(text="never")
    )
    done = run_di_code("run", "--max-turns", "2", "--output-format", "json", "look everywhere")
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert posts(llm_server) == 2
    assert (result["is_error"], result["result"]) == (True, "Turn limit reached (2)")
    assert result["num_requests"] == 2  # the main agent's one and one subagent's
    assert result["num_turns"] == 1  # the main agent's own requests


def test_without_subagents_both_counts_are_the_same(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(tool_calls=(ToolCallSpec("ls", {}),)), Turn(text="listed"))
    done = run_di_code("run", "--output-format", "json", "list")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["num_turns"] == result["num_requests"] == posts(llm_server) == 2


def test_subagents_on_a_model_of_their_own_count_too(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text('[subagents]\nmodel = "openai/cheap-model"\n')
    calls = tuple(
        ToolCallSpec("task", {"description": "job", "prompt": f"part {n}"}, f"t{n}")
        for n in range(3)
    )
    reading = Turn(tool_calls=(ToolCallSpec("ls", {}),), model="cheap-model")
    llm_server.script(Turn(tool_calls=calls), *[reading] * 10, Turn(text="never"))
    done = run_di_code("run", "--max-turns", "3", "--output-format", "json", "look")
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert posts(llm_server) == result["num_requests"] == 3
    assert result["result"] == "Turn limit reached (3)"
