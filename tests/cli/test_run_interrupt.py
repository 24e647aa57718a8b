"""Ctrl-C, SIGTERM or SIGHUP during a long bash tool: the run ends with 130, 143 or 129, the
aborted message is saved and no process of the tool survives (the sandbox off: this tests the
process-group mechanism)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.processes import SAFETY_TIMEOUT, alive, wait_until
from tests.support.session_files import saved_stop_reasons


@pytest.mark.parametrize(
    ("number", "code", "said"),
    [
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGTERM, 143, "terminated"),
        (signal.SIGHUP, 129, "hung up"),
    ],
)
def test_a_stop_signal_during_long_bash_aborts_saves_and_kills_the_tool(
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


@pytest.mark.parametrize("after", [0.0, 0.3, 0.8])
def test_ctrl_c_ends_a_run_with_a_100_mb_prompt_at_once(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path, after: float
) -> None:
    """A 100 MB prompt piped in (a log: `@` words on every line, distinct ones too) is work
    for the loop: its `@` mentions are looked for and its request body encoded. Ctrl-C at any
    moment of it ends the run with 130 before the model (30 s away) could answer, and so does
    the session file's append of it (a thread of its own writes it). How soon is not timed
    here (the machine may be loaded): that the body is encoded off the loop, in pieces that
    let it turn, is checked without a clock by tests/ai/test_big_body_off_loop.py."""
    (tmp_path / "notes.txt").write_text("not an image\n")
    line = b"user@host said: see @notes.txt and @%d, then more words follow here\n"
    prompt = b"".join(line % (n % 5000) for n in range(1_450_000))
    assert len(prompt) > 100_000_000
    llm_server.script(Turn(text="never seen", first_delay=30))
    process = subprocess.Popen(
        [DI_CODE, "run"],
        cwd=tmp_path,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdin is not None
        process.stdin.write(prompt)  # returns once di-code has read all but a pipe's worth
        process.stdin.close()
        time.sleep(after)
        process.send_signal(signal.SIGINT)
        process.stdin = None  # closed above: communicate() must not flush it
        _, stderr = process.communicate(timeout=SAFETY_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr[-2000:]
