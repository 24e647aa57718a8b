"""Figure 2: from process start to the first byte of the model request at a loopback server.

di-code is installed as a user installs it (`pip install`, no extras) and records its session,
as a user's run does (Codex and Claude Code record theirs too), with the same install run with
`--no-session` beside it; the README's editable dev install, with the `mcp` extra, is shown as
`dev-checkout`. Codex runs with the plainest config a user would write (agents.CODEX_CONFIG).

Every agent gets its own loopback server speaking its wire format, so the client it talks to
and the settings it reads are the ones a user would have.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from scripts.bench.agents import API_KEY, NPM_AGENTS, Agent, di_code, npm_agent
from scripts.bench.context import Bench
from scripts.bench.fig_startup import peer_env
from scripts.bench.loopback import LoopbackServer
from scripts.bench.measure import ChildFailed, end_group, interleaved, last_line
from scripts.bench.peers import PeerUnavailable
from scripts.bench.report import Row, Stat, Target, skipped
from scripts.bench.wire import MODEL, ScriptedModel

PEERS = ("di-code-user", "mini", "npm")
NO_SESSION = "di-code --no-session"
"""The user install again, recording no session: shown beside the user's default."""
ARRIVAL_TIMEOUT_S = 30.0


def first_request_s(
    argv: Sequence[str | Path],
    env: dict[str, str],
    server: LoopbackServer,
    index: int,
    cwd: Path | None = None,
    finish: bool = False,
) -> float:
    """Seconds from spawning `argv` to its request's first byte; the child is then ended, or
    with `finish` left to answer and exit (a warm-up: what it caches at exit, it keeps)."""
    with tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen(
            [str(a) for a in argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        try:
            arrived = _wait_arrival(proc, server, index)
        except TimeoutError as exc:
            err.seek(0)
            reason = last_line(err.read().decode(errors="replace"))
            raise ChildFailed(f"{Path(argv[0]).name} sent no request ({exc}): {reason}") from None
        finally:
            if finish:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(ARRIVAL_TIMEOUT_S)
            end_group(proc.pid)  # a finished run may leave none
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


@dataclass(frozen=True, slots=True)
class Contender:
    name: str
    argv: list[str | Path]
    env: dict[str, str]
    server: LoopbackServer


TARGETS: dict[str, float | None] = {
    "codex": 0.9,
    "mini": 0.5,
    "pi": None,
    "claude": None,
    "dev-checkout": None,
}
"""Bounds on di-code / peer (None: the ratio is shown, nothing is asked)."""


def run(bench: Bench) -> list[Row]:
    if not bench.has("di_code.cli.app"):
        return [skipped("2", "time to first request", "di_code.cli.app not written yet")]
    missing: list[Row] = []
    with bench.scratch_home() as home, ExitStack() as servers:

        def serve(agent: Agent) -> Contender:
            server = servers.enter_context(LoopbackServer(ScriptedModel(agent.wire)))
            env = agent.env(home / agent.name, server.origin)
            argv: list[str | Path] = [*agent.prompt_argv("hi")]
            return Contender(agent.name, argv, env, server)

        try:
            user = bench.user_install().bin("di-code")
        except PeerUnavailable as exc:
            return [skipped("2", "time to first request", str(exc))]
        contenders = [
            serve(di_code(bench, user, session=True)),
            serve(di_code(bench, user, name=NO_SESSION)),
            serve(di_code(bench, name="dev-checkout", session=True)),
        ]
        try:
            mini = bench.peer("mini").bin("mini")
            server = servers.enter_context(LoopbackServer(ScriptedModel("chat")))
            env = peer_env(home / "mini") | {
                "OPENAI_API_KEY": API_KEY,
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_BASE": server.base_url,
            }
            mini_argv: list[str | Path] = [mini, "-m", f"openai/{MODEL}", "-t", "hi", "-y"]
            contenders.append(Contender("mini", mini_argv, env, server))
        except PeerUnavailable as exc:
            missing.append(skipped("2", "first request vs mini", str(exc)))
        try:
            contenders += [serve(npm_agent(bench, name)) for name in NPM_AGENTS]
        except PeerUnavailable as exc:
            missing.append(skipped("2", "first request vs pi, claude, codex", str(exc)))
        times: dict[str, list[float]] = {c.name: [] for c in contenders}
        for timed, contender in interleaved(contenders, bench.repeats):
            cwd = home / "work"
            cwd.mkdir(exist_ok=True)
            elapsed = first_request_s(
                contender.argv,
                contender.env,
                contender.server,
                len(contender.server.arrivals),
                cwd,
                finish=not timed,
            )
            if timed:
                times[contender.name].append(elapsed)
    ours = Stat.of(times["di-code"])
    rows = [Row("2", "time to first request", "s", ours, target=Target(0.2, "value"))]
    for name, bound in TARGETS.items():
        if name in times:
            target = Target(bound, "ratio") if bound is not None else None
            rows.append(
                Row("2", "time to first request", "s", ours, name, Stat.of(times[name]), target)
            )
    if "codex" in times:  # without recording: what the session file costs before the request
        rows.append(Row("2", "time to first request, --no-session", "s",
                        Stat.of(times[NO_SESSION]), "codex", Stat.of(times["codex"]),
                        Target(TARGETS["codex"] or 0.0, "ratio")))  # fmt: skip
    return [*rows, *missing]
