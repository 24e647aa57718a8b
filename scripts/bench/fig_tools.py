"""Figure 6: grep over a generated tree, read deep into a 1 GB file, bash with 1 GB of output."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from scripts.bench.context import Bench
from scripts.bench.measure import ChildFailed, child_env, last_line, run_child, run_worker
from scripts.bench.report import Row, Stat, Target, skipped
from scripts.bench.scratch import NEEDLE, make_big_file, make_tree


def call_tool(
    bench: Bench, workspace: Path, tool: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    answer, _run = run_worker(
        bench.python,
        "tool_call",
        {"workspace": str(workspace), "tool": tool, "arguments": arguments},
        env=child_env(),
    )
    if answer["is_error"]:
        raise ChildFailed(f"{tool} failed: {answer['text_head']}")
    return answer


def shell_wall(command: str, cwd: Path) -> float:
    run = run_child(["bash", "-c", command], cwd=cwd)
    if run.returncode not in (0, 1):
        raise ChildFailed(f"{command!r} exited {run.returncode}: {last_line(run.stderr)}")
    return run.wall_s


def run(bench: Bench) -> list[Row]:
    if not bench.has("di_code.tools.builtin.grep"):
        return [skipped("6", "tools", "di_code.tools not written yet")]
    bench.out.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    for part in (_grep, _read, _bash):
        with tempfile.TemporaryDirectory(prefix="tools-", dir=bench.out) as scratch:
            try:
                rows.extend(part(bench, Path(scratch)))
            except ChildFailed as exc:
                rows.append(skipped("6", part.__name__.strip("_"), f"error: {exc}"))
    return rows


def _grep(bench: Bench, scratch: Path) -> list[Row]:
    files = bench.scale(20_000, 2_000)
    make_tree(scratch, files, needles=50)
    rg = bench.bin("rg") if bench.bin("rg").exists() else shutil.which("rg")
    if rg is None:
        return [skipped("6", "grep vs rg", "rg is not installed")]
    ours, theirs = [], []
    for _ in range(bench.repeats + 1):
        theirs.append(shell_wall(f"{rg} -n {NEEDLE} .", scratch))
        answer = call_tool(bench, scratch, "grep", {"pattern": NEEDLE})
        if answer["text_head"].count(NEEDLE) < 1:
            raise ChildFailed(f"grep found nothing: {answer['text_head']}")
        ours.append(answer["seconds"])
    return [
        Row(
            "6",
            "grep over a tree",
            "s",
            Stat.of(ours[1:]),
            "bare rg -n",
            Stat.of(theirs[1:]),
            Target(1.3, "ratio"),
            f"{files:,} files",
        )
    ]


def _read(bench: Bench, scratch: Path) -> list[Row]:
    lines = bench.scale(1_000_000, 100_000)
    big = scratch / "big.txt"
    last = make_big_file(big, lines)
    walls, peaks, seds = [], [], []
    for _ in range(bench.repeats):
        answer = call_tool(bench, scratch, "read", {"path": "big.txt", "offset": lines, "limit": 1})
        if not answer["text_head"].startswith(last[:40]):
            raise ChildFailed(f"read returned the wrong line: {answer['text_head'][:60]!r}")
        walls.append(answer["seconds"])
        peaks.append(answer["peak_mib"])
        seds.append(shell_wall(f"sed -n '{lines}{{p;q}}' big.txt", scratch))
    size = f"line {lines:,} of {big.stat().st_size / 1e9:.2g} GB"
    return [
        Row(
            "6",
            "read deep line: wall",
            "s",
            Stat.of(walls),
            "sed -n 'Np;q'",
            Stat.of(seds),
            Target(2.0, "value"),
            size,
        ),
        Row(
            "6",
            "read deep line: peak memory",
            "MiB",
            Stat.of(peaks),
            target=Target(50, "value"),
            note="whole worker process",
        ),
    ]


def _bash(bench: Bench, scratch: Path) -> list[Row]:
    from di_code.tools.builtin.support.spill import FILE_CAP

    size = bench.scale(1_000_000_000, 100_000_000)
    command = f"yes '{'a' * 99}' | head -c {size}"
    walls, peaks, nulls, cats = [], [], [], []
    for _ in range(min(bench.repeats, 3)):
        nulls.append(shell_wall(f"{command} > /dev/null", scratch))
        cats.append(shell_wall(f"{command} | cat > /dev/null", scratch))
        answer = call_tool(bench, scratch, "bash", {"command": command})
        kept = min(size, FILE_CAP)  # a spill file keeps the first 256 MiB, then counts
        if answer["spilled_bytes"] < kept * 0.99:
            raise ChildFailed(f"bash kept {answer['spilled_bytes']} of {kept} bytes")
        walls.append(answer["seconds"])
        peaks.append(answer["peak_mib"])
    note = f"{size / 1e9:g} GB of output"
    return [
        Row(
            "6",
            "bash big output: wall",
            "s",
            Stat.of(walls),
            "same > /dev/null",
            Stat.of(nulls),
            Target(1.5, "ratio"),
            note,
        ),
        Row(
            "6",
            "bash big output: wall",
            "s",
            Stat.of(walls),
            "same | cat > /dev/null",
            Stat.of(cats),
            note="the cheapest reader of the same pipe, for reference",
        ),
        Row(
            "6",
            "bash big output: peak memory",
            "MiB",
            Stat.of(peaks),
            target=Target(100, "value"),
            note="whole worker process",
        ),
    ]
