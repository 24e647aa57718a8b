"""The simulated batch of the benchmarks (scripts/bench/batch_sim.py) on a few tasks: the real
driver over faux-provider tasks, killed and resumed, ends with every id exactly once."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.processes import wait_until


def test_the_simulated_batch_resumes_to_every_id_once(tmp_path: Path) -> None:
    tasks = tmp_path / "t.jsonl"
    lines = (json.dumps({"id": f"t{n}", "repo": ".", "prompt": "p"}) for n in range(3000))
    tasks.write_text("\n".join(lines) + "\n")
    results = tmp_path / "r.jsonl"
    command = [sys.executable, "-m", "scripts.bench.batch_sim", str(tasks), str(results), "4"]
    first = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    wait_until(lambda: results.exists() and results.stat().st_size > 0, "some results")
    first.send_signal(signal.SIGKILL)
    first.wait()
    subprocess.run(command, check=True, stderr=subprocess.DEVNULL, timeout=120)
    records, cut = [], []
    for line in results.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            cut.append(line)  # the line the kill cut short, if it cut one: not a result
    assert len(cut) <= 1
    assert sorted(r["id"] for r in records) == sorted(f"t{n}" for n in range(3000))
    assert all(r["answer"] == f"answer to {r['id']}" for r in records)
