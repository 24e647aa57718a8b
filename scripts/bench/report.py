"""Rows of the results table: a measured figure, its baseline, the ratio and the target check."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

Status = Literal["pass", "FAIL", "info", "skip", "error"]
Comparison = Literal["max", "min"]


@dataclass(frozen=True, slots=True)
class Stat:
    """Median with min and max over repeated runs (the machines are noisy: quote all three)."""

    median: float
    min: float
    max: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Stat:
        if not values:
            raise ValueError("no measurements")
        return cls(statistics.median(values), min(values), max(values), len(values))


@dataclass(frozen=True, slots=True)
class Target:
    """`value` is either a bound on the ratio to the baseline, or on the figure itself."""

    value: float
    on: Literal["ratio", "value"]
    comparison: Comparison = "max"

    def describe(self, unit: str) -> str:
        sign = "≤" if self.comparison == "max" else "≥"
        return f"{sign} {self.value:g}×" if self.on == "ratio" else f"{sign} {self.value:g} {unit}"

    def met_by(self, value: float) -> bool:
        return value <= self.value if self.comparison == "max" else value >= self.value


@dataclass(frozen=True, slots=True)
class Row:
    figure: str
    metric: str
    unit: str
    di_code: Stat | None
    baseline_name: str = ""
    baseline: Stat | None = None
    target: Target | None = None
    note: str = ""
    skipped: str = ""

    @property
    def ratio(self) -> float | None:
        if self.di_code is None or self.baseline is None or self.baseline.median == 0:
            return None
        return self.di_code.median / self.baseline.median

    @property
    def status(self) -> Status:
        if self.skipped:
            return "error" if self.skipped.startswith("error:") else "skip"
        if self.target is None or self.di_code is None:
            return "info"
        checked = self.ratio if self.target.on == "ratio" else self.di_code.median
        if checked is None:
            return "skip"
        return "pass" if self.target.met_by(checked) else "FAIL"

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["ratio"] = self.ratio
        data["status"] = self.status
        data["target"] = self.target.describe(self.unit) if self.target else None
        return data


def skipped(figure: str, metric: str, reason: str) -> Row:
    return Row(figure, metric, "", None, skipped=reason)


def _number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}" if value >= 0.01 else f"{value:.2g}"


def _stat(stat: Stat | None, unit: str) -> str:
    if stat is None:
        return "-"
    spread = f" [{_number(stat.min)}–{_number(stat.max)}]" if stat.n > 1 else ""
    return f"{_number(stat.median)} {unit}{spread}"


def table_lines(rows: Sequence[Row]) -> list[str]:
    """The table as aligned text lines, one per row (Markdown-compatible)."""
    header = ["fig", "metric", "di-code", "baseline", "ratio", "target", "result"]
    body = []
    for row in rows:
        baseline = (
            f"{row.baseline_name}: {_stat(row.baseline, row.unit)}"
            if row.baseline
            else (row.baseline_name or "-")
        )
        result = row.skipped if row.status == "error" else row.status
        if row.status == "skip":
            result = f"skip: {row.skipped}"
        body.append(
            [
                row.figure,
                row.metric + (f" ({row.note})" if row.note else ""),
                _stat(row.di_code, row.unit),
                baseline,
                f"{row.ratio:.3g}×" if row.ratio is not None else "-",
                row.target.describe(row.unit) if row.target else "-",
                result,
            ]
        )
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def fmt(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return [fmt(header), fmt(["-" * w for w in widths]), *(fmt(line) for line in body)]


def write_json(path: Path, rows: Sequence[Row], machine: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"machine": machine, "rows": [row.to_json() for row in rows]}
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
