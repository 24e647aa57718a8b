"""`di-code run` end to end: a real subprocess against the loopback model server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import API_KEY, RunDiCode, request_text
from tests.support.llm_server import HttpError, LLMServer, Turn, call


def test_read_edit_bash_then_answer(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "hello.txt").write_text("hello world\n")
    llm_server.script(
        call("read", {"path": "hello.txt"}, "c1"),
        call(
            "edit", {"path": "hello.txt", "edits": [{"old_text": "world", "new_text": "di"}]}, "c2"
        ),
        call("bash", {"command": "cat hello.txt"}, "c3"),
        Turn(text="Done: the file now greets di."),
    )
    done = run_di_code("run", "--yes", "greet di instead of world")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Done: the file now greets di.\n"
    assert done.stderr == ""  # progress goes to stderr only when it is a terminal
    assert (workspace / "hello.txt").read_text() == "hello di\n"
    requests = [request_text(r.body) for r in llm_server.requests if r.method == "POST"]
    assert len(requests) == 4
    assert "greet di instead of world" in requests[0]
    assert "hello world" in requests[1]  # the read result reached the model
    assert "hello di" in requests[3]  # so did bash's output
    assert str(workspace) in requests[0]  # the system prompt names the workspace


def test_piped_stdin_is_appended_to_the_prompt(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(text="looks fine"))
    done = run_di_code("run", "review this", input="diff --git a/x b/x\n+new line\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "looks fine\n"
    sent = request_text(llm_server.requests[-1].body)
    assert "review this\\n\\n<stdin>\\ndiff --git a/x b/x\\n+new line\\n</stdin>" in sent


def test_dash_reads_the_prompt_from_stdin(run_di_code: RunDiCode, llm_server: LLMServer) -> None:
    llm_server.script(Turn(text="4"))
    done = run_di_code("run", "-", input="what is 2+2?")
    assert (done.returncode, done.stdout) == (0, "4\n")
    assert "what is 2+2?" in request_text(llm_server.requests[-1].body)


def test_no_prompt_at_all_is_a_usage_error(run_di_code: RunDiCode, llm_server: LLMServer) -> None:
    done = run_di_code("run", input="")
    assert done.returncode == 2
    assert done.stderr.startswith("di-code: no prompt") and done.stderr.count("\n") == 1
    assert llm_server.requests == []


def test_json_output(run_di_code: RunDiCode, llm_server: LLMServer) -> None:
    llm_server.script(call("ls", {}), Turn(text="two files", input_tokens=30, output_tokens=4))
    done = run_di_code("run", "--output-format", "json", "list")
    assert done.returncode == 0, done.stderr
    assert API_KEY not in done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert next(iter(result)) == "type" and result["type"] == "result"
    assert result["is_error"] is False and result["stop_reason"] == "stop"
    assert result["result"] == "two files" and result["num_turns"] == 2
    assert isinstance(result["session_id"], str) and result["session_id"]
    assert result["usage"]["input"] == 40 and result["usage"]["output"] == 9


def test_stream_json_output(run_di_code: RunDiCode, llm_server: LLMServer) -> None:
    llm_server.script(call("ls", {}), Turn(text="done"))
    done = run_di_code("run", "--output-format", "stream-json", "list")
    assert done.returncode == 0, done.stderr
    assert API_KEY not in done.stdout
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(next(iter(line)) == "type" for line in lines)
    types = [line["type"] for line in lines]
    assert types[0] == "agent_start" and types[-2:] == ["agent_end", "result"]
    assert "tool_execution_start" in types and "message_update" in types
    assert lines[-1]["result"] == "done" and lines[-1]["num_turns"] == 2


def test_provider_error_exits_1_with_one_line(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(HttpError(401, "Incorrect API key provided"))
    done = run_di_code("run", "hi")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "401" in done.stderr
    assert "Incorrect API key provided" in done.stderr and API_KEY not in done.stderr


def test_json_error_result(run_di_code: RunDiCode, llm_server: LLMServer) -> None:
    llm_server.script(HttpError(401, "bad key"))
    done = run_di_code("run", "--output-format", "json", "hi")
    result = json.loads(done.stdout)
    assert done.returncode == 1 and result["is_error"] is True
    assert result["stop_reason"] == "error" and "bad key" in result["result"]


def test_unknown_provider_and_missing_key_exit_2(run_di_code: RunDiCode) -> None:
    unknown = run_di_code("run", "--model", "nosuch/model", "hi")
    assert unknown.returncode == 2
    assert unknown.stderr.startswith('di-code: unknown provider "nosuch"')
    missing = run_di_code("run", "--model", "anthropic/claude-x", "hi")
    assert missing.returncode == 2
    assert "ANTHROPIC_API_KEY" in missing.stderr and missing.stderr.count("\n") == 1
    assert "Traceback" not in unknown.stderr + missing.stderr


def test_nothing_configured_exits_2_listing_the_ways(run_di_code: RunDiCode) -> None:
    done = run_di_code("run", "hi", server=False)
    assert done.returncode == 2
    assert "OPENAI_API_KEY" in done.stderr and "--model" in done.stderr
    assert "local server" in done.stderr


def test_discovered_local_server_is_used_and_named(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(text="hi from local"))
    done = run_di_code(
        "run",
        "hi",
        server=False,
        env_extra={"DI_CODE_DISCOVERY": f"ollama={llm_server.openai_base_url}"},
    )
    assert (done.returncode, done.stdout) == (0, "hi from local\n")
    assert "test-model" in done.stderr and "ollama" in done.stderr
    assert llm_server.requests[-1].body["model"] == "test-model"


def test_an_empty_or_cut_answer_is_said_on_stderr(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(text=""), Turn(text="half an ans", stop_reason="length"))
    empty = run_di_code("run", "hi")
    assert (empty.returncode, empty.stdout) == (0, "")
    assert empty.stderr == "di-code: the model ended its turn without any answer text\n"
    cut = run_di_code("run", "hi")
    assert (cut.returncode, cut.stdout) == (0, "half an ans\n")
    assert cut.stderr == "di-code: the answer was cut at the model's output token limit\n"
