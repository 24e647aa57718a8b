"""The benchmark harness's own logic: stats, target checks, the table and the JSON it writes.

No timing is asserted here: a benchmark is not a test. The smoke run only checks that a tiny
run of one cheap figure produces a well-formed row.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.bench.report import Row, Stat, Target, skipped, table_lines, write_json

ROOT = Path(__file__).resolve().parents[2]


def test_stat_gives_median_min_max() -> None:
    assert Stat.of([3.0, 1.0, 2.0, 10.0]) == Stat(2.5, 1.0, 10.0, 4)
    with pytest.raises(ValueError):
        Stat.of([])


def test_ratio_target_passes_and_fails() -> None:
    fast = Row("1", "start", "s", Stat.of([0.1]), "python", Stat.of([0.05]), Target(6, "ratio"))
    slow = Row("1", "start", "s", Stat.of([0.4]), "python", Stat.of([0.05]), Target(6, "ratio"))
    assert fast.ratio == pytest.approx(2.0)
    assert fast.status == "pass"
    assert slow.status == "FAIL"


def test_minimum_targets_and_absolute_targets() -> None:
    throughput = Row(
        "3", "sse", "ev/s", Stat.of([90.0]), "sdk", Stat.of([10.0]), Target(8, "ratio", "min")
    )
    assert throughput.status == "pass"
    memory = Row("1", "mem", "MiB", Stat.of([30.0]), target=Target(25, "value"))
    assert memory.status == "FAIL"
    assert memory.ratio is None
    assert Row("4", "info", "ms", Stat.of([1.0])).status == "info"


def test_skips_and_errors_are_reported_not_faked() -> None:
    assert skipped("2", "mini", "mini: install failed").status == "skip"
    assert skipped("3", "sse", "error: ValueError: boom").status == "error"
    lines = table_lines([skipped("2", "first request", "mini: install failed")])
    assert "skip: mini: install failed" in lines[2]


def test_table_has_header_and_one_aligned_line_per_row(tmp_path: Path) -> None:
    rows = [
        Row(
            "7",
            "validate",
            "µs",
            Stat.of([100.0, 120.0, 140.0]),
            "validate()",
            Stat.of([3600.0]),
            Target(150, "value"),
        ),
        skipped("5", "render", "not written yet"),
    ]
    lines = table_lines(rows)
    assert len(lines) == 4
    assert len({len(line) for line in lines}) == 1
    assert "120 µs [100–140]" in lines[2]
    assert "0.0333×" in lines[2]
    assert "pass" in lines[2]
    out = tmp_path / "r.json"
    write_json(out, rows, {"nproc": 2})
    data = json.loads(out.read_text())
    assert data["machine"] == {"nproc": 2}
    assert data["rows"][0]["status"] == "pass"
    assert data["rows"][0]["target"] == "≤ 150 µs"
    assert data["rows"][0]["di_code"]["median"] == 120.0
    assert data["rows"][1]["status"] == "skip"


def test_quick_run_of_one_figure_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scripts.bench",
            "--only",
            "7",
            "--quick",
            "--repeats",
            "1",
            "--json",
            str(out),
            "--out",
            str(tmp_path),
            "--quiet",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())["rows"]
    assert [row["figure"] for row in rows] == ["7", "7"]
    assert rows[0]["di_code"]["median"] > 0
    assert rows[0]["status"] in ("pass", "FAIL")
    assert "validate edit-style args" in done.stdout


def test_unknown_figure_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scripts.bench", "--only", "99", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "unknown figure(s): 99 (known: 1-14)" in done.stderr
