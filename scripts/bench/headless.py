"""Whole headless runs of each agent against a scripted loopback model (figures 10 and 11).

Each run is a fresh process under GNU time (wall, CPU of the whole process tree, peak memory);
at every request the server samples the tree's CPU time while the client waits for the answer,
so the cost of each turn can be told apart from start-up.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from scripts.bench.agents import NPM_AGENTS, Agent, di_code, npm_agent
from scripts.bench.context import Bench
from scripts.bench.loopback import Arrival, LoopbackServer
from scripts.bench.measure import ChildFailed, ChildRun, last_line, run_child, tree_cpu_s
from scripts.bench.peers import PeerUnavailable
from scripts.bench.report import Row, Stat, Target, skipped
from scripts.bench.wire import ScriptedModel

RUN_TIMEOUT_S = 300.0


@dataclass(slots=True)
class CpuSampler:
    """Records (arrival, CPU seconds of the agent's process tree) at each request."""

    pid: int = 0
    samples: list[tuple[Arrival, float]] = field(default_factory=list)

    def start(self, pid: int) -> None:
        self.pid = pid
        self.samples.clear()

    def on_arrival(self, arrival: Arrival) -> None:
        self.samples.append((arrival, tree_cpu_s(self.pid) if self.pid else 0.0))


@dataclass(frozen=True, slots=True)
class HeadlessRun:
    run: ChildRun
    samples: list[tuple[Arrival, float]]

    def turn_marks(self) -> list[tuple[float, float]]:
        """(arrival time, CPU) of the loop's requests: the first one holding k tool results,
        for k = 0, 1, …; side requests a peer makes in between are left out."""
        marks: dict[int, tuple[float, float]] = {}
        for arrival, cpu in self.samples:
            marks.setdefault(arrival.tool_results, (arrival.at, cpu))
        return [marks[k] for k in sorted(marks)]


def agents(bench: Bench, figure: str) -> tuple[list[Agent], list[Row]]:
    """di-code and every npm peer that is installed; a skip row for those that are not."""
    found = [di_code(bench)]
    try:
        found += [npm_agent(bench, name) for name in NPM_AGENTS]
    except PeerUnavailable as exc:
        return found, [skipped(figure, "vs pi, claude, codex", str(exc))]
    return found, []


@contextmanager
def workspace(bench: Bench) -> Iterator[tuple[Path, Path]]:
    """(scratch HOME, working folder holding notes.txt, the file the read tool is sent to)."""
    with bench.scratch_home() as home:
        work = home / "work"
        work.mkdir()
        lines = (f"line {n}: the quick brown fox jumps over the lazy dog\n" for n in range(200))
        (work / "notes.txt").write_text("".join(lines))
        yield home, work


def run_headless(
    agent: Agent, model: ScriptedModel, prompt: str, home: Path, cwd: Path
) -> HeadlessRun:
    sampler = CpuSampler()
    with LoopbackServer(model, on_arrival=sampler.on_arrival) as server:
        env = agent.env(home / agent.name, server.origin)
        run = run_child(
            agent.prompt_argv(prompt),
            env=env,
            cwd=cwd,
            timeout=RUN_TIMEOUT_S,
            on_start=sampler.start,
        )
    if run.returncode != 0:
        raise ChildFailed(f"{agent.name} exited {run.returncode}: {last_line(run.stderr)}")
    return HeadlessRun(run, list(sampler.samples))


def compare(
    figure: str,
    metric: str,
    unit: str,
    stats: dict[str, Stat],
    bound: float | None = None,
    note: str = "",
) -> list[Row]:
    """di-code's figure against each peer's, one row per peer (`bound`: on the ratio)."""
    ours = stats["di-code"]
    target = Target(bound, "ratio") if bound is not None else None
    rows = [
        Row(figure, metric, unit, ours, name, stat, target, note)
        for name, stat in stats.items()
        if name != "di-code"
    ]
    return rows or [Row(figure, metric, unit, ours, note=note)]


def stats_of(samples: Mapping[str, Sequence[float]]) -> dict[str, Stat]:
    return {name: Stat.of(values) for name, values in samples.items()}
