"""Figure 11: one streamed answer of 20,000 words (one delta each), headless, against the peers.

The whole run is measured (start-up included): CPU of the process tree, peak memory, wall. The
answer must reach the agent's output whole, or the run counts as failed.
"""

from __future__ import annotations

from scripts.bench.context import Bench
from scripts.bench.headless import agents, compare, run_headless, stats_of, workspace
from scripts.bench.measure import ChildFailed, interleaved
from scripts.bench.report import Row
from scripts.bench.wire import ScriptedModel

PEERS = ("npm",)
WORDS = 20_000


def run(bench: Bench) -> list[Row]:
    contenders, missing = agents(bench, "11")
    words = bench.scale(WORDS, 2_000)
    cpu: dict[str, list[float]] = {a.name: [] for a in contenders}
    peak: dict[str, list[float]] = {a.name: [] for a in contenders}
    wall: dict[str, list[float]] = {a.name: [] for a in contenders}
    with workspace(bench) as (home, work):
        for timed, agent in interleaved(contenders, bench.repeats):
            model = ScriptedModel(agent.wire, words=words)
            done = run_headless(agent, model, "Say word many times.", home, work)
            printed = done.run.stdout.count("word")
            if printed < words:
                raise ChildFailed(f"{agent.name} printed {printed} of {words} words")
            if timed:
                cpu[agent.name].append(done.run.cpu_s)
                peak[agent.name].append(done.run.maxrss_mib)
                wall[agent.name].append(done.run.wall_s)
    note = f"{words:,} words"
    return [
        *compare("11", "streamed answer: CPU", "s", stats_of(cpu), note=note),
        *compare("11", "streamed answer: peak memory", "MiB", stats_of(peak), note=note),
        *compare("11", "streamed answer: wall", "s", stats_of(wall), note=note),
        *missing,
    ]
