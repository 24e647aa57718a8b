"""`run` and its background jobs: a job ends, its whole tree, when `run` ends; the session
continued later says the job was running and ended, never that it runs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import RunDiCode
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.processes import alive

TREE = "sleep 1000 & echo $! > tree; setsid sleep 1000 & echo $! >> tree; echo started; wait"


def test_run_ends_its_jobs_and_a_continued_session_says_they_ended(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    start = ToolCallSpec("bash", {"command": TREE, "run_in_background": True})
    llm_server.script(Turn(tool_calls=(start,)), Turn(text="Started."))
    done = run_di_code("run", "--permission-mode", "auto", "--sandbox", "off", "serve")
    assert done.returncode == 0, done.stderr
    started = json.dumps(llm_server.requests[-1].body)
    assert "Started job 1" in started and "started" in started
    pids = [int(word) for word in (workspace / "tree").read_text().split()]
    assert len(pids) == 2
    assert not [pid for pid in pids if alive(pid)]

    llm_server.script(Turn(text="Noted."))
    again = run_di_code("run", "-c", "--permission-mode", "auto", "--sandbox", "off", "is it up?")
    assert again.returncode == 0, again.stderr
    told = "[Background job 1 (`sleep 1000 & echo $! > tree; setsid sleep 1000 & echo $! >> "
    assert told in json.dumps(llm_server.requests[-1].body)
    assert "was running when the session stopped; it ended" in again.stderr


def test_run_tells_the_user_once_when_a_job_ends_on_its_own(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    job = "echo bye; until [ -e go ]; do sleep 0.05; done; exit 5"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": job, "background": True}),)),
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "touch go"}),)),
        Turn(tool_calls=(ToolCallSpec("job_output", {"job_id": 1, "wait": 30}),)),
        Turn(text="It ended."),
    )
    done = run_di_code("run", "--permission-mode", "auto", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("[Background job 1 (`echo bye;") == 1, done.stderr
    assert "exited with code 5; last lines:\nbye]" in done.stderr
    assert "exited with code 5" in json.dumps(llm_server.requests[-1].body)
