"""Figure 2: from process start to the first byte of the model request at a loopback server."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from scripts.bench.context import Bench
from scripts.bench.fig_startup import peer_env
from scripts.bench.loopback import LoopbackServer
from scripts.bench.measure import ChildFailed, last_line
from scripts.bench.peers import PeerUnavailable
from scripts.bench.report import Row, Stat, Target, skipped
from scripts.bench.wire import chat_completion_sse

ARRIVAL_TIMEOUT_S = 30.0


def first_request_s(
    argv: Sequence[str | Path], env: dict[str, str], server: LoopbackServer, index: int
) -> float:
    """Seconds from spawning `argv` to its request's first byte; the child is then ended."""
    with tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen(
            [str(a) for a in argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
            start_new_session=True,
        )
        try:
            arrived = _wait_arrival(proc, server, index)
        except TimeoutError as exc:
            err.seek(0)
            reason = last_line(err.read().decode(errors="replace"))
            raise ChildFailed(f"{Path(argv[0]).name} sent no request ({exc}): {reason}") from None
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return arrived - started


def _wait_arrival(proc: subprocess.Popen[bytes], server: LoopbackServer, index: int) -> float:
    """Wait for the request, but give up at once if the child exits without sending one."""
    deadline = time.monotonic() + ARRIVAL_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            return server.wait_arrival(index, 0.05)
        except TimeoutError:
            if proc.poll() is not None:
                raise TimeoutError(f"exit code {proc.returncode}") from None
    raise TimeoutError(f"nothing within {ARRIVAL_TIMEOUT_S:g} s")


def run(bench: Bench) -> list[Row]:
    if not bench.has("di_code.cli.app"):
        return [skipped("2", "time to first request", "di_code.cli.app not written yet")]
    with (
        tempfile.TemporaryDirectory(prefix="bench-home-") as home,
        LoopbackServer(chat_completion_sse(3)) as server,
    ):
        env = peer_env(Path(home)) | {
            "OPENAI_API_KEY": "bench-key",
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_BASE": server.base_url,
        }
        commands: dict[str, list[str | Path]] = {
            "di-code": [
                bench.bin("di-code"),
                "run",
                "--model",
                "openai/bench-model",
                "--no-session",
                "hi",
            ]
        }
        missing = None
        try:
            mini = bench.peer("mini").bin("mini")
            commands["mini"] = [str(mini), "-m", "openai/bench-model", "-t", "hi", "-y"]
        except PeerUnavailable as exc:
            missing = skipped("2", "first request vs mini", str(exc))
        times: dict[str, list[float]] = {name: [] for name in commands}
        index = 0
        for attempt in range(bench.repeats + 1):
            for name, argv in commands.items():
                elapsed = first_request_s(argv, env, server, index)
                index += 1
                if attempt:
                    times[name].append(elapsed)
    di_code = Stat.of(times["di-code"])
    rows = [Row("2", "time to first request", "s", di_code, target=Target(0.35, "value"))]
    if missing:
        return [*rows, missing]
    rows.append(
        Row(
            "2",
            "time to first request",
            "s",
            di_code,
            "mini",
            Stat.of(times["mini"]),
            Target(0.5, "ratio"),
        )
    )
    return rows
