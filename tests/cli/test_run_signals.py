"""Background jobs a command left do not outlive di-code, even one in a session of its own
(re-parented to di-code, the subreaper, once its shell is gone).

Real `di-code run` processes against the loopback model server, with the sandbox off: these
test the process-group mechanism that works without bubblewrap.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.processes import SAFETY_TIMEOUT, alive, wait_until


@pytest.mark.parametrize(
    "launch",
    [
        "sleep 100 & echo $! > {pid}",
        "nohup sleep 100 > /dev/null 2>&1 & echo $! > {pid}",
        "setsid sleep 100 > /dev/null 2>&1 & echo $! > {pid}",  # a session of its own
    ],
    ids=["background", "nohup", "setsid"],
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
