"""Child processes measured from outside: wall time, CPU time and peak memory (os.wait4).

Every benchmark runs in a fresh child so one figure's imports and heap never colour another's,
and so peers run under their own interpreters. Workers print one JSON object as their last line.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORKERS = Path(__file__).resolve().parent / "workers"
DEFAULT_TIMEOUT_S = 300.0
TIME = "/usr/bin/time"
"""Peak memory comes from GNU time, not from our own wait4: Linux keeps ru_maxrss across exec,
so a child forked from this (large) process would report at least our size."""


class ChildFailed(Exception):
    """A measured child exited badly; the message carries its last stderr line."""


@dataclass(frozen=True, slots=True)
class ChildRun:
    started: float
    """time.monotonic() just before the child was spawned."""
    wall_s: float
    cpu_s: float
    maxrss_mib: float
    returncode: int
    stdout: str
    stderr: str


def run_child(
    argv: Sequence[str | Path],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> ChildRun:
    """Run to completion with stdin closed; kill it (and fail) after `timeout` seconds."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r") as peak,
    ):
        wrapper = [TIME, "-f", "%M", "-o", peak.name] if os.path.exists(TIME) else []
        started = time.monotonic()
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*wrapper, *(str(part) for part in argv)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
        timer = threading.Timer(timeout, _kill_group, (proc.pid,))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ChildRun(
            started,
            wall,
            usage.ru_utime + usage.ru_stime,
            _peak_kib(peak.read(), usage.ru_maxrss) / 1024,
            proc.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
        )


def _peak_kib(reported: str, fallback: int) -> int:
    """GNU time's %M (the last line: a killed child makes it print a notice first)."""
    lines = reported.strip().splitlines()
    return int(lines[-1]) if lines and lines[-1].isdigit() else fallback


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, 9)


def run_worker(
    python: Path | str,
    worker: str,
    params: Mapping[str, Any],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> tuple[dict[str, Any], ChildRun]:
    """Run workers/<worker>.py under `python`; return its JSON answer and the measurement."""
    run = run_child(
        [python, WORKERS / f"{worker}.py", json.dumps(params)], env=env, timeout=timeout
    )
    if run.returncode != 0:
        raise ChildFailed(f"{worker} exited {run.returncode}: {last_line(run.stderr)}")
    lines = run.stdout.strip().splitlines()
    if not lines:
        raise ChildFailed(f"{worker} printed nothing: {last_line(run.stderr)}")
    return json.loads(lines[-1]), run


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output)"


def child_env(**extra: str) -> dict[str, str]:
    """The environment for children: this one, minus anything that could leak a real key."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(extra)
    return env
