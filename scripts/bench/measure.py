"""Child processes measured from outside: wall time, CPU time and peak memory (os.wait4).

Every benchmark runs in a fresh child so one figure's imports and heap never colour another's,
and so peers run under their own interpreters. Workers print one JSON object as their last line.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    on_start: Callable[[int], None] | None = None,
) -> ChildRun:
    """Run to completion with stdin closed; kill it (and fail) after `timeout` seconds.

    `on_start` gets the pid of the process started (GNU time, when it wraps the command).
    """
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
        if on_start:
            on_start(proc.pid)
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


def rotated(items: Sequence[Any], round_: int) -> list[Any]:
    """The order for one round of interleaved runs (a Williams design): each item leads one
    round in turn and, over len(items) rounds (twice that for an odd count), runs right after
    every other item equally often. A plain rotation kept the cyclic order, so one peer always
    ran right after the same neighbour (Codex after Claude Code, whose dying 300 MiB process
    slowed it)."""
    count = len(items)
    if not count:
        return []
    first, low, high = [0], 1, count - 1
    while low <= high:
        first.append(low)
        if low != high:
            first.append(high)
        low, high = low + 1, high - 1
    order = [items[(index + round_) % count] for index in first]
    return order[::-1] if count % 2 and (round_ // count) % 2 else order


def interleaved(items: Sequence[Any], repeats: int) -> Iterator[tuple[bool, Any]]:
    """(timed, item) for one untimed warm-up round, then `repeats` rounds (ABAB…) in the
    order `rotated` gives."""
    for round_ in range(repeats + 1):
        for item in rotated(items, round_):
            yield round_ > 0, item


def end_group(pgid: int, timeout: float = 5.0) -> None:
    """Kill a process group and wait until none of it is still running (zombies left for
    init aside), so that the next measured run starts on a machine no longer busy tearing
    down this one's processes: killing reaps only the leader we started."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while _running_in_group(pgid) and time.monotonic() < deadline:
        time.sleep(0.005)


def _running_in_group(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in "ZX":
            return True
    return False


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of a live process and all its descendants (reaped ones included).

    Each /proc/PID/stat gives the process's own user and system time and those of the children
    it has waited for; live children are walked through /proc/PID/task/*/children.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rpartition(")")[2].split()
    ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return ticks / CLOCK_TICKS + sum(tree_cpu_s(child) for child in _children(pid))


def _children(pid: int) -> list[int]:
    found = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(c) for c in (task / "children").read_text().split()]
    return found


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output)"


def child_env(**extra: str) -> dict[str, str]:
    """The environment for children: this one, minus anything that could leak a real key."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(extra)
    return env
