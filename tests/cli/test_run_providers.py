"""`di-code run` against the loopback server where real local servers differ (issue 17):
tool calls cut by the output limit, missing usage, timeouts, the context window flag."""

from __future__ import annotations

import json

from tests.cli.conftest import RunDiCode
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


def test_tool_calls_cut_by_the_output_limit_are_said_not_run(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    calls = (ToolCallSpec("ls", {}, "c1"), ToolCallSpec("ls", {"path": "."}, "c2"))
    llm_server.script(Turn(text="Let me look.", tool_calls=calls, stop_reason="length"))
    done = run_di_code("run", "--yes", "list")
    assert done.returncode == 0
    assert done.stdout == "Let me look.\n"
    assert done.stderr == ("di-code: 2 tool calls not run: the reply hit the output token limit\n")
    assert len([r for r in llm_server.requests if r.method == "POST"]) == 1  # nothing ran


def test_usage_the_server_never_sent_is_unknown_not_zero(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(text="hi", input_tokens=0, output_tokens=0))
    done = run_di_code("run", "--output-format", "json", "hi")
    usage = json.loads(done.stdout)["usage"]
    assert usage["input"] is None and usage["output"] is None and usage["cost"] is None
    assert usage["unreported_turns"] == 1


def test_the_first_byte_wait_is_set_by_environment(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(text="late", fault="stall", fault_after=0))
    done = run_di_code("run", "hi", env_extra={"DI_CODE_FIRST_BYTE_TIMEOUT": "0.5"})
    assert done.returncode == 1
    assert done.stderr == "di-code: openai: stream stalled (no reply for 0.5 s)\n"
    bad = run_di_code("run", "hi", env_extra={"DI_CODE_STALL_TIMEOUT": "soon"})
    assert bad.returncode == 2
    assert "DI_CODE_STALL_TIMEOUT must be a number of seconds above 0, not 'soon'" in bad.stderr


def test_the_context_window_flag_sets_the_max_tokens_share(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(text="ok"))
    args = ["--model", "llamacpp/gemma", "--base-url", llm_server.openai_base_url]
    done = run_di_code("run", *args, "--context-window", "2048", "hi")
    assert done.returncode == 0, done.stderr
    posts = [r for r in llm_server.requests if r.method == "POST"]
    assert posts[-1].body["max_tokens"] == 512
    assert not any(r.path == "/props" for r in llm_server.requests)  # the flag wins: no probe
