"""The other `run` options end to end: sessions, limits, system prompt, extra roots, progress."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

from tests.cli.conftest import DI_CODE, RunDiCode, cli_env, request_text
from tests.support.llm_server import LLMServer, Replay, ToolCallSpec, Turn


def system_text(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list) and messages[0]["role"] == "system"
    return str(messages[0]["content"])


def test_continue_resumes_and_no_session_saves_nothing(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    llm_server.script(Turn(text="first answer"), Turn(text="second answer"), Turn(text="third"))
    first = run_di_code("run", "--output-format", "json", "remember the word kumquat")
    assert first.returncode == 0, first.stderr
    assert run_di_code("run", "--continue", "what was the word?").stdout == "second answer\n"
    sent = request_text(llm_server.requests[-1].body)
    assert "remember the word kumquat" in sent and "first answer" in sent
    files = list((di_code_home / "sessions").rglob("*.jsonl"))
    assert len(files) == 1 and json.loads(first.stdout)["session_id"] in files[0].name
    unsaved = run_di_code("run", "--no-session", "--output-format", "json", "hi")
    assert json.loads(unsaved.stdout)["session_id"] is None
    assert len(list((di_code_home / "sessions").rglob("*.jsonl"))) == 1


def test_continue_without_a_session_is_a_usage_error(run_di_code: RunDiCode) -> None:
    done = run_di_code("run", "--continue", "hi")
    assert done.returncode == 2 and done.stderr.startswith("di-code: no session to continue")


def test_max_turns_ends_the_run_with_exit_1(run_di_code: RunDiCode, llm_server: LLMServer) -> None:
    llm_server.script(Turn(tool_calls=(ToolCallSpec("ls", {}),)), Turn(text="never asked"))
    done = run_di_code("run", "--max-turns", "1", "list forever")
    assert done.returncode == 1
    assert done.stderr == "di-code: Turn limit reached (1)\n"
    assert len([r for r in llm_server.requests if r.method == "POST"]) == 1


def test_without_configuration_a_model_that_never_stops_is_stopped_at_100_requests(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    never_stops = Turn(tool_calls=(ToolCallSpec("ls", {}),))
    llm_server.script(*[never_stops] * 150, Turn(text="only reached without a limit"))
    done = run_di_code("run", "--output-format", "json", "list forever")
    assert done.returncode == 1
    assert done.stderr == ""
    result = json.loads(done.stdout)
    assert (result["is_error"], result["result"]) == (True, "Turn limit reached (100)")
    assert result["num_turns"] == 100 and "unreported_turns" not in result["usage"]
    assert len([r for r in llm_server.requests if r.method == "POST"]) == 100


def test_a_reply_trickling_a_byte_at_a_time_ends_at_the_stall_timeout(
    run_di_code: RunDiCode, llm_server: LLMServer, tmp_path: Path
) -> None:
    reply = tmp_path / "trickle.sse"
    line = b'data: {"choices": [{"index": 0, "delta": {"content": "' + b"x" * 100 + b'"}}]}\n\n'
    reply.write_bytes(line)
    llm_server.script(Replay(str(reply), cuts=tuple(range(1, len(line))), delay=0.05))
    done = run_di_code("run", "hi", env_extra={"DI_CODE_STALL_TIMEOUT": "1"})
    assert done.returncode == 1
    assert done.stderr == "di-code: openai: stream stalled (no complete event for 1 s)\n"


def test_system_prompt_replaced_or_appended_from_text_or_file(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "extra.md").write_text("Always answer in French.")
    llm_server.script(Turn(text="a"), Turn(text="b"))
    assert run_di_code("run", "--system-prompt", "You are terse.", "hi").returncode == 0
    assert system_text(llm_server.requests[-1].body) == "You are terse."
    assert run_di_code("run", "--append-system-prompt", "extra.md", "hi").returncode == 0
    text = system_text(llm_server.requests[-1].body)
    assert text.startswith("You are di-code") and text.endswith("\n\nAlways answer in French.")


def test_add_dir_must_exist_and_is_named_in_the_prompt(
    run_di_code: RunDiCode, llm_server: LLMServer, tmp_path: Path
) -> None:
    missing = run_di_code("run", "--add-dir", str(tmp_path / "nope"), "hi")
    assert missing.returncode == 2 and "--add-dir: not a folder" in missing.stderr
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("from the other root")
    llm_server.script(Turn(tool_calls=(ToolCallSpec("read", {"path": str(other / "notes.txt")}),)))
    llm_server.script(Turn(text="read it"))
    assert run_di_code("run", "--add-dir", str(other), "read the notes").returncode == 0
    assert f"Also allowed: {other}" in system_text(llm_server.requests[0].body)
    assert "from the other root" in request_text(llm_server.requests[-1].body)


def test_progress_goes_to_stderr_when_it_is_a_terminal(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(tool_calls=(ToolCallSpec("ls", {}),)), Turn(text="all listed"))
    master, slave = pty.openpty()
    try:
        done = subprocess.run(
            [DI_CODE, "run", "list the files"],
            cwd=workspace,
            env=cli_env(di_code_home, llm_server),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
            text=True,
            timeout=60,
        )
        os.close(slave)
        progress = _read_all(master)
    finally:
        os.close(master)
    assert (done.returncode, done.stdout) == (0, "all listed\n")
    assert "ls" in progress and "all listed" not in progress


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other side is closed and drained
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_replaced_system_prompt_keeps_the_context_files(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Run the tests with make check.")
    llm_server.script(Turn(text="a"))
    assert run_di_code("run", "--system-prompt", "You are terse.", "hi").returncode == 0
    text = system_text(llm_server.requests[-1].body)
    assert text.startswith("You are terse.\n\n") and "You are di-code" not in text
    assert "Run the tests with make check." in text and "AGENTS.md" in text


def test_the_flag_wins_over_a_project_files_value(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code" / "config.toml").write_text("[limits]\nmax_turns = 1\n")
    call = Turn(tool_calls=(ToolCallSpec("ls", {}),))
    llm_server.script(call, call, Turn(text="done in three"))
    done = run_di_code("run", "--max-turns", "3", "list twice")
    assert (done.returncode, done.stdout) == (0, "done in three\n"), done.stderr
