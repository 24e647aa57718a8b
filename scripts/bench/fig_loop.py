"""Figure 4: the agent loop's own cost per turn, and how it grows with the transcript."""

from __future__ import annotations

from scripts.bench.context import Bench
from scripts.bench.measure import run_worker
from scripts.bench.report import Row, Stat, Target

LENGTHS = [10, 1000, 2000]


def run(bench: Bench) -> list[Row]:
    turns = 1000
    samples: dict[int, list[float]] = {length: [] for length in LENGTHS}
    for _ in range(bench.repeats):
        answer, _run = run_worker(
            bench.python, "loop_turns", {"turns": turns, "lengths": LENGTHS, "window": 10}
        )
        for length in LENGTHS:
            samples[length].append(answer[str(length)])
    rows = [
        Row(
            "4",
            f"loop: per turn at {length} messages",
            "ms",
            Stat.of(samples[length]),
            target=Target(1.0, "value"),
            note=f"{turns} faux turns",
        )
        for length in LENGTHS
    ]
    growth_base = Stat.of(samples[LENGTHS[0]])
    rows.append(
        Row(
            "4",
            f"loop: growth {LENGTHS[0]}→{LENGTHS[-1]} messages",
            "ms",
            Stat.of(samples[LENGTHS[-1]]),
            f"at {LENGTHS[0]}",
            growth_base,
            Target(2.0, "ratio"),
        )
    )
    return rows
