"""`di-code run` records sessions: `--continue` and `--session` resume them, even after kill -9."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from di_code.session import SessionStore
from tests.cli.conftest import DI_CODE, cli_env, request_text
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "notes.txt").write_text("remember me\n")
    return folder


def run(home: Path, server: LLMServer, cwd: Path, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [DI_CODE, "run", "--output-format", "json", *args],
        cwd=cwd,
        env=cli_env(home, server),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def posted(server: LLMServer) -> list[str]:
    return [request_text(r.body) for r in server.requests if r.method == "POST"]


def test_run_then_continue_then_session_prefix(
    di_code_home: Path, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(Turn(text="Noted: 4711."), Turn(text="It was 4711."), Turn(text="Yes."))
    first = run(di_code_home, llm_server, workspace, "remember the number 4711")
    second = run(di_code_home, llm_server, workspace, "--continue", "which number?")
    assert second["session_id"] == first["session_id"]
    sent = posted(llm_server)[1]
    assert "remember the number 4711" in sent and "Noted: 4711." in sent
    assert sent.index("Noted: 4711.") < sent.index("which number?")
    prefix = str(first["session_id"])[:8]
    third = run(di_code_home, llm_server, workspace, "--session", prefix, "sure?")
    assert third["session_id"] == first["session_id"]
    assert "It was 4711." in posted(llm_server)[2]
    session = SessionStore(di_code_home).latest(workspace)
    assert session is not None and len(session.context()) == 6


def test_kill_9_mid_stream_keeps_every_ended_message(
    di_code_home: Path, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("read", {"path": "notes.txt"}, "c1"),)),
        Turn(text="The notes say: remember me, and then", fault="stall", fault_after=3),
    )
    child = subprocess.Popen(
        [DI_CODE, "run", "--yes", "--output-format", "stream-json", "read the notes"],
        cwd=workspace,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert child.stdout is not None
        for line in child.stdout:  # until the second reply is streaming
            event = json.loads(line)
            if event["type"] == "message_update" and event["event"]["type"] == "text_delta":
                break
        else:
            pytest.fail("the run ended before its reply streamed")
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=30)
    session = SessionStore(di_code_home).latest(workspace, write=False)
    assert session is not None and session.warnings == []
    assert [m.role for m in session.context()] == ["user", "assistant", "tool_result"]

    llm_server.script(Turn(text="Done."))
    result = run(di_code_home, llm_server, workspace, "--continue", "go on")
    assert result["session_id"] == session.id
    sent = posted(llm_server)[-1]
    assert "read the notes" in sent and "remember me" in sent and "go on" in sent
