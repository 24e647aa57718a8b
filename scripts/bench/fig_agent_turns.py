"""Figure 10: 30 turns of a read-only tool, headless, di-code against pi, Claude Code and Codex.

The scripted model answers every request with a call of the agent's own read-only tool on the
same 200-line file (di-code and pi `read`, Claude Code `Read`, Codex `cat` through its shell
tool) until the conversation holds 30 results, then says "word". A turn is the time between the
requests holding k and k+1 results: the agent's handling of the answer, the tool run and the
next request; per turn CPU is the process tree's CPU over those 30 turns, divided by 30.
"""

from __future__ import annotations

import itertools
import statistics

from scripts.bench.context import Bench
from scripts.bench.headless import agents, compare, run_headless, stats_of, workspace
from scripts.bench.measure import ChildFailed, interleaved
from scripts.bench.report import Row
from scripts.bench.wire import ScriptedModel

PEERS = ("npm",)
TURNS = 30
PROMPT = "Read notes.txt again and again."


def run(bench: Bench) -> list[Row]:
    contenders, missing = agents(bench, "10")
    turns = bench.scale(TURNS, 5)
    wall: dict[str, list[float]] = {a.name: [] for a in contenders}
    cpu: dict[str, list[float]] = {a.name: [] for a in contenders}
    total: dict[str, list[float]] = {a.name: [] for a in contenders}
    peak: dict[str, list[float]] = {a.name: [] for a in contenders}
    with workspace(bench) as (home, work):
        path = str(work / "notes.txt")
        for timed, agent in interleaved(contenders, bench.repeats):
            model = ScriptedModel(agent.wire, turns=turns, words=1, read_path=path)
            done = run_headless(agent, model, PROMPT, home, work)
            marks = done.turn_marks()
            if len(marks) != turns + 1:
                raise ChildFailed(f"{agent.name} made {len(marks) - 1} of {turns} tool turns")
            if not timed:
                continue
            walls = [b[0] - a[0] for a, b in itertools.pairwise(marks)]
            wall[agent.name].append(statistics.median(walls) * 1000)
            cpu[agent.name].append((marks[-1][1] - marks[0][1]) / turns * 1000)
            total[agent.name].append(done.run.wall_s)
            peak[agent.name].append(done.run.maxrss_mib)
    note = f"{turns} turns"
    return [
        *compare("10", "tool turn: wall per turn", "ms", stats_of(wall), 0.5, note),
        *compare("10", "tool turn: CPU per turn", "ms", stats_of(cpu), note=note),
        *compare("10", "tool turns: peak memory", "MiB", stats_of(peak), 0.5, note),
        *compare("10", "tool turns: whole run wall", "s", stats_of(total), note=note),
        *missing,
    ]
