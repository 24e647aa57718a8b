"""Figure 12: the same 30 read-only tool turns as figure 10, di-code driven by an editor over
ACP (`di-code acp`, through the SDK's own client: scripts/bench/workers/acp_client.py) against
`di-code run` recording its session too (ACP always records one), interleaved. A turn is
timed at the loopback server as in figure 10; the ACP side's CPU includes its client (the
editor's own work, which `run` has none of), so the wall time per turn is the figure the
target is on (issue 26: within 1.2x of `run`)."""

from __future__ import annotations

import itertools
import statistics
import sys
from pathlib import Path

from scripts.bench.agents import Agent, di_code_settings
from scripts.bench.context import Bench
from scripts.bench.headless import run_headless, stats_of, workspace
from scripts.bench.measure import ChildFailed, interleaved
from scripts.bench.report import Row, Target
from scripts.bench.wire import MODEL, ScriptedModel

TURNS = 30
PROMPT = "Read notes.txt again and again."


def acp_agent(bench: Bench) -> Agent:
    client = Path(__file__).parent / "workers" / "acp_client.py"  # run in the scratch folder
    worker = [str(client), str(bench.bin("di-code"))]
    return Agent("di-code acp", "chat", Path(sys.executable), worker, di_code_settings)


def run_with_session(bench: Bench) -> Agent:
    """`run` recording its session, as `di-code acp` always does (the editor may load it)."""
    argv = ["run", "--model", f"openai/{MODEL}"]
    return Agent("di-code", "chat", bench.bin("di-code"), argv, di_code_settings)


def run(bench: Bench) -> list[Row]:
    contenders = [run_with_session(bench), acp_agent(bench)]
    turns = bench.scale(TURNS, 5)
    wall: dict[str, list[float]] = {a.name: [] for a in contenders}
    with workspace(bench) as (home, work):
        path = str(work / "notes.txt")
        for timed, agent in interleaved(contenders, bench.repeats):
            model = ScriptedModel(agent.wire, turns=turns, words=1, read_path=path)
            done = run_headless(agent, model, PROMPT, home, work)
            marks = done.turn_marks()
            if len(marks) != turns + 1:
                raise ChildFailed(f"{agent.name} made {len(marks) - 1} of {turns} tool turns")
            if timed:
                walls = [b[0] - a[0] for a, b in itertools.pairwise(marks)]
                wall[agent.name].append(statistics.median(walls) * 1000)
    stats = stats_of(wall)
    return [
        Row(
            "12",
            "tool turn over ACP: wall per turn",
            "ms",
            stats["di-code acp"],
            "di-code run (session)",
            stats["di-code"],
            Target(1.2, "ratio"),
            f"{turns} turns",
        )
    ]
