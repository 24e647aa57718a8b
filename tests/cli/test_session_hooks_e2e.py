"""The SessionStart, SessionEnd and PreCompact hooks in a real `di-code run`: a real hook
command gets Claude Code's payload (session_id, transcript_path, cwd, hook_event_name and the
event's own field); its matcher matches that field; a failing one is one line and changes
nothing; an untrusted project's never run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import RunDiCode
from tests.support.hooks import events, log_hooks
from tests.support.llm_server import HttpError, LLMServer, Turn

OVERFLOW = "request (3252 tokens) exceeds the available context size (2048 tokens)"


def test_session_start_end_and_auto_pre_compact_in_run(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    di_code_home: Path,
    tmp_path: Path,
    workspace: Path,
) -> None:
    log = tmp_path / "events.jsonl"
    log_hooks(di_code_home, log, {"SessionStart": "", "SessionEnd": "", "PreCompact": "auto"})
    llm_server.script(Turn(text="a long first answer. " * 400))  # something to compact later
    done = run_di_code("run", "--output-format", "json", "first")
    assert done.returncode == 0, done.stderr
    session_id = json.loads(done.stdout)["session_id"]
    start, end = events(log)
    assert start["hook_event_name"] == "SessionStart" and start["source"] == "startup"
    assert end["hook_event_name"] == "SessionEnd" and end["reason"] == "other"
    for event in (start, end):
        assert event["session_id"] == session_id and event["cwd"] == str(workspace.resolve())
        assert Path(str(event["transcript_path"])).is_file()
        assert session_id in str(event["transcript_path"])

    log.write_text("")
    llm_server.script(
        HttpError(400, OVERFLOW), Turn(text="a summary of the talk"), Turn(text="second answer")
    )
    done = run_di_code("run", "-c", "second")
    assert done.returncode == 0, done.stderr
    told = events(log)
    assert [e["hook_event_name"] for e in told] == ["SessionStart", "PreCompact", "SessionEnd"]
    assert told[0]["source"] == "resume"
    assert told[1]["trigger"] == "auto" and told[1]["custom_instructions"] == ""
    assert told[1]["session_id"] == session_id


def test_a_matcher_picks_the_source_and_a_failing_hook_is_one_line(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "events.jsonl"
    log_hooks(di_code_home, log, {"SessionStart": "resume|clear"})
    with (di_code_home / "config.toml").open("a") as config:
        config.write('[[hooks.SessionEnd]]\nhooks = [{ type = "command", command = "exit 3" }]\n')
    llm_server.script(Turn(text="answer"))
    done = run_di_code("run", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "answer"
    assert not log.exists() or events(log) == []  # startup: not matched
    [line] = [line for line in done.stderr.splitlines() if "SessionEnd" in line]
    assert "exited 3" in line


def test_an_untrusted_projects_session_hooks_never_run(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code" / "config.toml").write_text(
        f'[[hooks.SessionStart]]\nhooks = [{{ type = "command", command = "touch {marker}" }}]\n'
    )
    llm_server.script(Turn(text="answer"))
    done = run_di_code("run", "hello")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "ignored until you trust this project" in done.stderr
