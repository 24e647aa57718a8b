"""What finding `di_code.tools` plugins costs `run`: `python -m scripts.bench.plugin_scan`.

Each sample is a fresh interpreter (the same venv) timing, with perf_counter, importlib.metadata's
import (which the set-up does off the event loop) and `entry_points(group=...)`, as
`di_code.tools.extensions.plugins.load_plugin_tools` finds the plugins. Printed: the median and
the range in ms of each step, and how many distributions the interpreter sees.
A benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

RUNS = 9
IMPORT_AND_SCAN = """
import time, json
started = time.perf_counter()
import importlib.metadata as metadata
imported = time.perf_counter()
found = list(metadata.entry_points(group="di_code.tools"))
print(json.dumps([(imported - started) * 1000, (time.perf_counter() - imported) * 1000]))
"""
COUNT = """
import os, sys
print(sum(name.endswith((".dist-info", ".egg-info"))
          for folder in sys.path if os.path.isdir(folder or ".")
          for name in os.listdir(folder or ".")))
"""


def sample() -> list[float]:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_AND_SCAN],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [float(ms) for ms in json.loads(done.stdout.strip().splitlines()[-1])]


def main() -> None:
    count = subprocess.run(
        [sys.executable, "-c", COUNT], capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()
    print(f"{count} distributions on sys.path, {RUNS} fresh interpreters")
    samples = [sample() for _ in range(RUNS)]
    for step, label in enumerate(("import importlib.metadata", "entry_points(group=...)")):
        times = [one[step] for one in samples]
        low, high = min(times), max(times)
        print(f"{label:<28} {statistics.median(times):6.2f} ms  [{low:.2f}-{high:.2f}]")


if __name__ == "__main__":
    main()
