"""A prompt's session line, attacked between the model request and the answer's first byte
(README: Reliability, "Nothing lost"): its fsync's thread starts only once the answer does, so
that window is where a stop finds a line written and not yet synced.

Each case runs the real `di-code run` under `strace`, which records every write and fsync of
the session file, against a model that never sends its first byte; the run is stopped there
(SIGTERM, Ctrl-C, SIGHUP, a second signal at once, SIGKILL, a closed stdout). After each the
session file loads and holds the prompt, and, except after SIGKILL (which no process can
answer), no write to it is left without an fsync after it."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from di_code.ai.types import UserMessage
from di_code.session import SessionStore
from tests.cli.conftest import DI_CODE, started
from tests.cli.conftest import workspace as workspace  # the fixture, for this folder too
from tests.support.llm_server import HttpError, LLMServer, Turn
from tests.support.processes import wait_until
from tests.support.strace import MISSING, STRACE, strace_works

PROMPT = "the prompt that must not be lost"


def traced_run(
    trace: Path, home: Path, server: LLMServer, workspace: Path
) -> subprocess.Popen[str]:
    """`di-code run PROMPT` under strace, every write and fsync of its threads in `trace` with
    the path of the file written (`-y`)."""
    if not strace_works():
        pytest.skip(MISSING)
    assert STRACE is not None
    tracer = [STRACE, "-f", "--seccomp-bpf", "-qq", "-y", "-s", "0", "-e", "signal=none"]
    under = [*tracer, "-e", "trace=write,fsync", "-o", str(trace)]
    return started(home, server, workspace, "run", PROMPT, under=under)


def traced_pid(tracer: subprocess.Popen[str]) -> int:
    """di-code's process id: strace's child once it runs di-code (strace forks probes of its own
    first, and a child runs strace's command line until it has started di-code)."""
    found: list[int] = []

    def started() -> bool:
        children = Path(f"/proc/{tracer.pid}/task/{tracer.pid}/children").read_text().split()
        found[:] = [int(pid) for pid in children if DI_CODE in program(int(pid))]
        return bool(found)

    wait_until(started, "strace to start di-code")
    return found[0]


def program(pid: int) -> str:
    """What `pid` runs: its command line's first two words (di-code's is its interpreter's)."""
    with contextlib.suppress(OSError):
        return b" ".join(Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2]).decode()
    return ""


def unsynced_writes(trace: Path) -> list[str]:
    """The writes to a session file after its last fsync began (strace's lines, in order)."""
    session = re.compile(r"^\d+ +(write|fsync)\(\d+<[^>]*/sessions/[^>]*\.jsonl>")
    left: list[str] = []
    for line in trace.read_text().splitlines():
        call = session.match(line)
        if call is None:
            continue
        if call.group(1) == "fsync":
            left = []
        else:
            left.append(line)
    return left


def stopped_at_first_byte(
    tmp_path: Path, home: Path, server: LLMServer, workspace: Path, stop: str
) -> tuple[int, str, Path]:
    """Run, wait for the request, stop the run as `stop` says: (exit code, stderr, trace)."""
    server.script(Turn(text="never sent", fault="stall", fault_after=0))
    trace = tmp_path / "write.trace"
    tracer = traced_run(trace, home, server, workspace)
    pid = traced_pid(tracer)
    try:
        wait_until(lambda: len(server.requests) == 1, "the model request")
        assert tracer.stdout is not None
        if stop == "closed stdout":
            tracer.stdout.close()
        elif stop == "SIGINT and SIGTERM at once":  # held while stopped: handled back to back
            os.kill(pid, signal.SIGSTOP)
            os.kill(pid, signal.SIGINT)
            os.kill(pid, signal.SIGTERM)
            os.kill(pid, signal.SIGCONT)
        else:
            number = getattr(signal, stop.removeprefix("twice "))
            os.kill(pid, number)
            if stop.startswith("twice "):
                with contextlib.suppress(ProcessLookupError):  # ended by the first already
                    os.kill(pid, number)
        err = tracer.stderr.read() if tracer.stderr is not None else ""
        code = tracer.wait(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):  # a failed case leaves nothing running
            os.kill(pid, signal.SIGKILL)
        tracer.wait(timeout=30)
    return code, err, trace


def prompts_kept(home: Path, workspace: Path) -> list[str]:
    """The prompts the session file holds, loaded as `run -c` loads it (no warning)."""
    session = SessionStore(home).latest(workspace, write=False)
    assert session is not None
    assert session.warnings == []
    return [
        "".join(getattr(part, "text", "") for part in m.content)
        for m in session.context()
        if isinstance(m, UserMessage)
    ]


STOPS = ["SIGTERM", "SIGINT", "SIGHUP", "twice SIGTERM", "twice SIGINT", "closed stdout"]


@pytest.mark.parametrize("stop", [*STOPS, "SIGINT and SIGTERM at once"])
def test_a_stop_before_the_answers_first_byte_leaves_the_prompt_synced(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path, stop: str
) -> None:
    code, err, trace = stopped_at_first_byte(tmp_path, di_code_home, llm_server, workspace, stop)
    assert code in (129, 130, 141, 143), err
    assert "Traceback" not in err
    assert prompts_kept(di_code_home, workspace) == [PROMPT]
    assert unsynced_writes(trace) == [], trace.read_text()


def test_sigkill_before_the_answers_first_byte_leaves_a_session_holding_the_prompt(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    code, _, _ = stopped_at_first_byte(tmp_path, di_code_home, llm_server, workspace, "SIGKILL")
    assert code == -signal.SIGKILL
    assert prompts_kept(di_code_home, workspace) == [PROMPT]


def test_a_refused_request_ends_the_run_with_the_prompt_synced(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """No answer ever begins (the model refuses the request): the prompt's sync is started by
    what follows it, or by the exit."""
    llm_server.script(HttpError(400, "refused"))
    trace = tmp_path / "write.trace"
    tracer = traced_run(trace, di_code_home, llm_server, workspace)
    _, err = tracer.communicate(timeout=90)
    assert tracer.returncode == 1, err
    assert "Traceback" not in err
    assert prompts_kept(di_code_home, workspace) == [PROMPT]
    assert unsynced_writes(trace) == [], trace.read_text()
