"""The task tool in a real `di-code run` against the loopback model: subagents with contexts of
their own, run in parallel, stopped by one Ctrl-C, their usage counted, their transcript kept,
and custom subagent files that narrow the tools."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

from tests.cli.conftest import DI_CODE, RunDiCode, cli_env, request_text
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.processes import SAFETY_TIMEOUT, wait_until

SUBAGENT_NOTE = "You are a subagent"


def task(call_id: str, prompt: str, kind: str | None = None) -> ToolCallSpec:
    arguments = {"description": f"job {call_id}", "prompt": prompt}
    if kind is not None:
        arguments["subagent_type"] = kind
    return ToolCallSpec("task", arguments, call_id)


def messages_of(body: dict[str, Any], role: str) -> list[str]:
    found = []
    for message in body["messages"]:
        if message["role"] == role:
            content = message["content"]
            found.append(content if isinstance(content, str) else json.dumps(content))
    return found


def offered(body: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in body.get("tools", [])}


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


def stream_events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_two_tasks_in_one_turn_each_have_their_own_context_and_answer_the_parent(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(
        Turn(tool_calls=(task("t1", "find where alpha is defined"), task("t2", "count betas"))),
        Turn(text="first answer"),
        Turn(text="second answer"),
        Turn(text="all done"),
    )
    done = run_di_code("run", "investigate the code")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "all done"
    parent, first, second, final = (request.body for request in llm_server.requests)
    assert "task" in offered(parent)
    answers = {}
    for body, answer in ((first, "first answer"), (second, "second answer")):
        (system,) = messages_of(body, "system")
        assert SUBAGENT_NOTE in system
        assert "sees only your final message" in system  # its own guidelines: it reads only
        assert "run the project's tests" not in system and "answer briefly" not in system
        (prompt,) = messages_of(body, "user")  # its own context: the job only
        assert "investigate the code" not in request_text(body)
        assert offered(body) == {"read", "grep", "find", "ls"}
        answers["t1" if "alpha" in prompt else "t2"] = answer
    assert set(answers) == {"t1", "t2"}
    assert tool_results(final) == answers


def test_a_subagent_s_tool_calls_usage_and_transcript_reach_the_parent(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    (workspace / "notes.txt").write_text("the answer is 42\n")
    llm_server.script(
        Turn(tool_calls=(task("t1", "read notes.txt and report the answer"),)),
        Turn(tool_calls=(ToolCallSpec("read", {"path": "notes.txt"}, "r1"),)),
        Turn(text="it is 42"),
        Turn(text="the subagent says 42"),
    )
    done = run_di_code("run", "--output-format", "stream-json", "what is the answer?")
    assert done.returncode == 0, done.stderr
    events = stream_events(done.stdout)
    updates = [e for e in events if e["type"] == "tool_execution_update"]
    assert any(
        [c["name"] for c in u["partial_result"]["details"]["tool_calls"]] == ["read"]
        for u in updates
    )
    (end,) = [e for e in events if e["type"] == "tool_execution_end"]
    details = end["result"]["details"]
    assert end["result"]["content"] == [{"type": "text", "text": "it is 42"}]
    assert details["tool_calls"][0]["arguments"] == {"path": "notes.txt"}
    assert details["usage"]["input"] == 20  # the subagent's two requests
    result = events[-1]
    assert result["type"] == "result" and result["usage"]["input"] == 40  # and the parent's
    transcript = Path(details["transcript"])
    assert transcript.parent.name.endswith(".subagents")
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert lines[0]["type"] == "session"
    assert "the answer is 42" in json.dumps(lines)  # the read result, kept out of the parent's
    (session_file,) = di_code_home.glob("sessions/*/*.jsonl")
    assert "the answer is 42" not in session_file.read_text()


def test_one_ctrl_c_stops_both_parallel_subagents(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(
        Turn(tool_calls=(task("t1", "search one"), task("t2", "search two"))),
        Turn(text="never", fault="stall", fault_after=0),
        Turn(text="never", fault="stall", fault_after=0),
    )
    process = subprocess.Popen(
        [DI_CODE, "run", "--output-format", "stream-json", "look around"],
        cwd=workspace,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:  # both subagents are asking at once: the tasks run in parallel
        wait_until(lambda: len(llm_server.requests) == 3, "both subagents' requests")
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=SAFETY_TIMEOUT)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert llm_server.wait_disconnects(2)
    ends = [e for e in stream_events(stdout) if e["type"] == "tool_execution_end"]
    assert sorted(e["tool_call_id"] for e in ends) == ["t1", "t2"]
    assert all(e["result"]["is_error"] for e in ends)
    for end in ends:  # each subagent's transcript is kept, with its aborted end
        transcript = Path(end["result"]["details"]["transcript"])
        assert '"stop_reason":"aborted"' in transcript.read_text().replace(" ", "")
    assert len(llm_server.requests) == 3  # nothing asked after the abort


def test_a_custom_subagent_file_narrows_the_tools_and_adds_its_instructions(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    agents = workspace / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code for bugs\ntools: Read, Glob, Bash\n"
        "model: sonnet\n---\nYou review code with great care.\n"
    )
    llm_server.script(
        Turn(tool_calls=(task("t1", "review app.py", kind="reviewer"),)),
        Turn(text="looks fine"),
        Turn(text="reviewed"),
    )
    done = run_di_code("run", "--tools", "read,find,grep,task", "review it")
    assert done.returncode == 0, done.stderr
    parent, sub, _ = (request.body for request in llm_server.requests)
    task_tool = next(t for t in parent["tools"] if t["function"]["name"] == "task")
    assert "- reviewer: Reviews code for bugs" in task_tool["function"]["description"]
    assert offered(sub) == {"read", "find"}  # bash is not the session's; grep not the file's
    (system,) = messages_of(sub, "system")
    assert "You review code with great care." in system


def test_an_unknown_subagent_type_is_an_error_the_model_reads(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(tool_calls=(task("t1", "do it", kind="nobody"),)), Turn(text="ok then"))
    done = run_di_code("run", "delegate")
    assert done.returncode == 0, done.stderr
    sent = tool_results(llm_server.requests[-1].body)["t1"]
    assert 'No subagent "nobody"' in sent
    assert len(llm_server.requests) == 2


def test_subagents_use_the_configured_model(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text('[subagents]\nmodel = "openai/cheap-model"\n')
    llm_server.script(
        Turn(tool_calls=(task("t1", "summarise the readme"),)),
        Turn(text="short summary", model="cheap-model"),
        Turn(text="done"),
    )
    done = run_di_code("run", "--output-format", "json", "summarise")
    assert done.returncode == 0, done.stderr
    parent, sub, final = (request.body for request in llm_server.requests)
    assert parent["model"] == final["model"] == "test-model"
    assert sub["model"] == "cheap-model"
    assert "sk-test-secret-4711" not in done.stdout + done.stderr


def test_a_session_with_a_task_is_continued_with_the_task_s_answer(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(
        Turn(tool_calls=(task("t1", "find the config loader"),)),
        Turn(text="it is in config.py"),
        Turn(text="the loader is in config.py"),
        Turn(text="yes, config.py"),
    )
    assert run_di_code("run", "where is the loader?").returncode == 0
    done = run_di_code("run", "--continue", "sure?")
    assert done.returncode == 0, done.stderr
    resumed = llm_server.requests[-1].body
    assert tool_results(resumed) == {"t1": "it is in config.py"}
    assert "find the config loader" not in json.dumps(messages_of(resumed, "user"))
