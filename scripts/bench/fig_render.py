"""Figure 5: streaming Markdown render cost, di-code against naive Rich Live and aider.

(a) one word per update, as fast as possible: CPU per update; every update at the small size,
50 evenly spaced ones at the larger sizes. (b) 100 words/s on a simulated clock: share of one
core, the longest gap between frames and the delay from the last word to the final frame.
Each renderer/size is one child process; min and max are over the updates, not over runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripts.bench.context import Bench
from scripts.bench.measure import run_worker
from scripts.bench.peers import PeerUnavailable
from scripts.bench.report import Row, Stat, Target, skipped

PEERS = ("aider",)
RATE = 100.0


def run(bench: Bench) -> list[Row]:
    if not bench.has("di_code.ui.markdown_stream"):
        return [skipped("5", "streaming render", "di_code.ui.markdown_stream not written yet")]
    small, mid, large = (300, 1000, 2000) if bench.quick else (1000, 5000, 20000)
    samples = 10 if bench.quick else 50
    pythons: dict[str, Path] = {"di_code": bench.python, "naive": bench.python}
    rows: list[Row] = []
    try:
        pythons["aider"] = bench.peer("aider").python
    except PeerUnavailable as exc:
        rows.append(skipped("5", "render vs aider", str(exc)))
    cost: dict[tuple[str, int], Stat] = {}
    for name, python in pythons.items():
        for words, picks in ((small, 0), (mid, samples), (large, samples)):
            bench.log(f"  render {name} {words} words")
            answer = _fast(python, name, words, picks)
            cost[(name, words)] = Stat.of(answer["per_update_ms"])
    rows.extend(_fast_rows(cost, small, large, mid, samples))
    rows.extend(_paced_rows(bench, pythons, small, mid, large))
    return rows


def _fast(python: Path, renderer: str, words: int, samples: int) -> dict[str, Any]:
    params = {"renderer": renderer, "mode": "fast", "words": words, "samples": samples}
    return run_worker(python, "render", params, timeout=900)[0]


def _fast_rows(
    cost: dict[tuple[str, int], Stat], small: int, large: int, mid: int, samples: int
) -> list[Row]:
    ours = cost[("di_code", large)]
    rows = [
        Row(
            "5",
            f"(a) per update, {large:,} words, growth",
            "ms",
            ours,
            f"di-code at {small:,}",
            cost[("di_code", small)],
            Target(1.5, "ratio"),
        )
    ]
    if ("aider", large) in cost:
        rows.append(
            Row(
                "5",
                f"(a) per update, {large:,} words",
                "ms",
                ours,
                "aider",
                cost[("aider", large)],
                Target(0.01, "ratio"),
            )
        )
    for words in (small, mid, large):
        for peer in ("naive", "aider"):
            if (peer, words) in cost and not (peer == "aider" and words == large):
                rows.append(
                    Row(
                        "5",
                        f"(a) per update, {words:,} words",
                        "ms",
                        cost[("di_code", words)],
                        peer,
                        cost[(peer, words)],
                        note="all updates" if words == small else f"{samples} sampled",
                    )
                )
    return rows


def _paced(python: Path, renderer: str, words: int) -> dict[str, float]:
    params = {"renderer": renderer, "mode": "paced", "words": words, "rate": RATE}
    return run_worker(python, "render", params, timeout=900)[0]


def _paced_rows(
    bench: Bench, pythons: dict[str, Path], small: int, mid: int, large: int
) -> list[Row]:
    rows = []
    for words in (small, mid, large):
        bench.log(f"  render di_code paced {words} words")
        ours = _paced(bench.python, "di_code", words)
        is_target = words == large
        rows += [
            Row(
                "5",
                f"(b) {words:,} words at 100/s: CPU",
                "% core",
                Stat.of([ours["cpu_share"] * 100]),
                target=Target(5, "value") if is_target else None,
            ),
            Row(
                "5",
                f"(b) {words:,} words at 100/s: longest frame gap",
                "ms",
                Stat.of([ours["max_gap_ms"]]),
                target=Target(100, "value") if is_target else None,
            ),
            Row(
                "5",
                f"(b) {words:,} words at 100/s: last word → final frame",
                "ms",
                Stat.of([ours["final_latency_ms"]]),
                target=Target(50, "value") if is_target else None,
            ),
        ]
        if words == small and "aider" in pythons:
            theirs = _paced(pythons["aider"], "aider", words)
            rows += [
                Row(
                    "5",
                    f"(b) {words:,} words at 100/s: CPU",
                    "% core",
                    Stat.of([ours["cpu_share"] * 100]),
                    "aider",
                    Stat.of([theirs["cpu_share"] * 100]),
                    note="reference",
                ),
                Row(
                    "5",
                    f"(b) {words:,} words at 100/s: longest frame gap",
                    "ms",
                    Stat.of([ours["max_gap_ms"]]),
                    "aider",
                    Stat.of([theirs["max_gap_ms"]]),
                    note="reference",
                ),
            ]
    return rows
