"""What finding `di_code.tools` plugins costs `run`: `python -m scripts.bench.plugin_scan`.

Each sample is a fresh interpreter (the same venv) timing, with perf_counter, either
importlib.metadata's import plus `entry_points(group=...)`, or di-code's own scan of the
`*.dist-info/entry_points.txt` files on sys.path
(`di_code.tools.extensions.plugins.entry_points`, whose module `run` imports anyway).
Printed: the median and the range in ms, and how many distributions the interpreter sees.
A benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

RUNS = 9
METADATA = """
import time, json
started = time.perf_counter()
import importlib.metadata as metadata
found = list(metadata.entry_points(group="di_code.tools"))
print(json.dumps((time.perf_counter() - started) * 1000))
"""
OWN_SCAN = """
import time, json, sys
from di_code.tools.extensions.plugins import GROUP, entry_points
started = time.perf_counter()
found = list(entry_points(GROUP, sys.path))
print(json.dumps((time.perf_counter() - started) * 1000))
"""
COUNT = """
import os, sys
print(sum(name.endswith((".dist-info", ".egg-info"))
          for folder in sys.path if os.path.isdir(folder or ".")
          for name in os.listdir(folder or ".")))
"""


def sample(code: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    count = subprocess.run(
        [sys.executable, "-c", COUNT], capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()
    print(f"{count} distributions on sys.path, {RUNS} fresh interpreters each")
    for label, code in (
        ("importlib.metadata (import + scan)", METADATA),
        ("di-code scan", OWN_SCAN),
    ):
        times = [sample(code) for _ in range(RUNS)]
        low, high = min(times), max(times)
        print(f"{label:<36} {statistics.median(times):6.2f} ms  [{low:.2f}-{high:.2f}]")


if __name__ == "__main__":
    main()
