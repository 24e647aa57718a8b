"""Figure 7: tool-argument validation per call, against jsonschema.validate() each time."""

from __future__ import annotations

from scripts.bench.context import Bench
from scripts.bench.measure import run_worker
from scripts.bench.report import Row, Stat, Target


def run(bench: Bench) -> list[Row]:
    found: dict[str, list[float]] = {}
    budget = 0.2 if bench.quick else 0.5
    for _ in range(bench.repeats):
        answer, _run = run_worker(bench.python, "validation", {"budget_s": budget})
        for key, value in answer.items():
            found.setdefault(key, []).append(value)
    di_code = Stat.of(found["di_code"])
    return [
        Row(
            "7",
            "validate edit-style args",
            "µs",
            di_code,
            "jsonschema.validate()",
            Stat.of(found["validate_each_time"]),
            Target(150, "value"),
        ),
        Row(
            "7",
            "validate edit-style args",
            "µs",
            di_code,
            "validator built once",
            Stat.of(found["validator_once"]),
            note="reference",
        ),
    ]
