"""SIGTERM and SIGHUP are handled like Ctrl-C, and background jobs do not outlive di-code.

Real `di-code run` processes against the loopback model server, with the sandbox off: these
test the process-group mechanism that works without bubblewrap.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import DI_CODE, cli_env
from tests.cli.test_run_interrupt import SAFETY_TIMEOUT, alive, wait_until
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


def saved_stop_reasons(home: Path) -> list[str]:
    reasons = []
    for path in home.glob("sessions/*/*.jsonl"):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if entry.get("type") == "message" and entry["message"].get("role") == "assistant":
                reasons.append(entry["message"].get("stop_reason", "stop"))
    return reasons


@pytest.mark.parametrize(
    ("number", "code", "said"),
    [(signal.SIGTERM, 143, "terminated"), (signal.SIGHUP, 129, "hung up")],
)
def test_sigterm_and_sighup_abort_the_run_and_kill_the_tool(
    llm_server: LLMServer,
    di_code_home: Path,
    tmp_path: Path,
    number: signal.Signals,
    code: int,
    said: str,
) -> None:
    pids = tmp_path / "pids"
    command = f"echo $$ >> {pids}; sleep 100 & echo $! >> {pids}; wait"
    llm_server.script(Turn(tool_calls=(ToolCallSpec("bash", {"command": command}),)))
    process = subprocess.Popen(
        [DI_CODE, "run", "--yes", "--sandbox", "off", "start the long job"],
        cwd=tmp_path,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: pids.exists() and len(pids.read_text().split()) == 2, "the tool")
        process.send_signal(number)
        stdout, stderr = process.communicate(timeout=SAFETY_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code, stderr
    assert stdout == ""
    assert stderr.strip().splitlines()[-1] == f"di-code: {said}"
    for pid in map(int, pids.read_text().split()):
        wait_until(lambda pid=pid: not alive(pid), f"process {pid} to end")
    assert saved_stop_reasons(di_code_home)[-1] == "aborted"


@pytest.mark.parametrize(
    "launch",
    ["sleep 100 & echo $! > {pid}", "nohup sleep 100 > /dev/null 2>&1 & echo $! > {pid}"],
    ids=["background", "nohup"],
)
def test_background_jobs_a_command_left_end_when_di_code_exits(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path, launch: str
) -> None:
    pid_file = tmp_path / "job.pid"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": launch.format(pid=pid_file)}),)),
        Turn(text="started"),
    )
    done = subprocess.run(
        [DI_CODE, "run", "--yes", "--sandbox", "off", "start a server"],
        cwd=tmp_path,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SAFETY_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "started"
    job = int(pid_file.read_text())
    try:
        wait_until(lambda: not alive(job), f"background job {job} to end")
    finally:
        if alive(job):
            os.kill(job, signal.SIGKILL)
