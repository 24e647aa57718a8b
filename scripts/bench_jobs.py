"""Benchmark: background jobs (issue 43).

    .venv/bin/python -m scripts.bench_jobs [--lines 50] [--jobs 20] [--seconds 10]

1. Latency: a job prints a line stamped with the time it wrote it, when a file appears; a
   job_output waiting for that line (wait + pattern) returns: from the write to the model's
   result, `--lines` times (median, max).
2. Memory: `--jobs` jobs each print lines as fast as they can for `--seconds` seconds; the
   resident memory of this process before, and after (the output read once at the end), and
   the bytes the jobs wrote.
Prints one JSON object. A benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from di_code.ai import AbortController  # noqa: E402
from di_code.tools import default_tools  # noqa: E402
from di_code.tools.builtin.support.bash_policy import BashPolicy  # noqa: E402
from di_code.tools.builtin.support.spill import SpillFolder  # noqa: E402

STAMP = (
    f'{sys.executable} -c "import os, time\n'
    "while not os.path.exists('go'): time.sleep(0.001)\n"
    "print('line', time.time(), flush=True)\n"
    'time.sleep(100)"'
)


def resident_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def latency(tools: dict[str, object], workspace: Path, count: int) -> list[float]:
    signal = AbortController().signal
    seen = []
    for n in range(count):
        go = workspace / "go"
        go.unlink(missing_ok=True)
        started = await tools["bash"].execute(  # type: ignore[attr-defined]
            str(n), {"command": STAMP, "background": True}, signal
        )
        job = started.details["job_id"]
        go.touch()
        read = await tools["job_output"].execute(  # type: ignore[attr-defined]
            str(n), {"job_id": job, "wait": 30, "pattern": r"^line "}, signal
        )
        now = time.time()
        stamp = float(read.content[0].text.split("line ", 1)[1].split()[0])
        seen.append((now - stamp) * 1000)
        await tools["job_kill"].execute(str(n), {"job_id": job}, signal)  # type: ignore[attr-defined]
    return seen


async def memory(policy: BashPolicy, tools: dict[str, object], jobs: int, seconds: float) -> dict:
    signal = AbortController().signal
    before = resident_kib()
    chatty = "yes 'a chatty job prints this line again and again'"
    for n in range(jobs):
        await tools["bash"].execute(str(n), {"command": chatty, "background": True}, signal)  # type: ignore[attr-defined]
    await asyncio.sleep(seconds)
    peak = resident_kib()
    written = sum(job.log.total for job in policy.jobs.jobs.values())  # type: ignore[attr-defined]
    for job_id in list(policy.jobs.jobs):
        await tools["job_output"].execute("r", {"job_id": job_id}, signal)  # type: ignore[attr-defined]
    await policy.jobs.stop_all()
    return {
        "jobs": jobs,
        "seconds": seconds,
        "written_mb": round(written / 2**20),
        "rss_before_mb": round(before / 1024, 1),
        "rss_with_jobs_mb": round(peak / 1024, 1),
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        policy = BashPolicy(spill=SpillFolder(workspace / "output"))  # removed with the folder
        tools: dict[str, object] = {t.name: t for t in default_tools(workspace, bash=policy)}
        seen = await latency(tools, workspace, args.lines)
        used = await memory(policy, tools, args.jobs, args.seconds)
    print(json.dumps({
        "latency_ms": {"median": round(statistics.median(seen), 2), "max": round(max(seen), 2),
                       "count": len(seen)},
        "memory": used,
    }))  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
