"""Branch coverage of a CI run, per package, and the guarded code held to its floor.

Reads coverage.py's combined data (`coverage combine` after `coverage run -m pytest`: the test
processes and every di-code they started). Prints each package's share of lines and branches
covered, then each guarded module's; exits 1 when a guarded module is under FLOOR.

    .venv/bin/python scripts/coverage_report.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

FLOOR = 95.0
GUARDED = (
    "di_code/tools/policy/permissions.py",  # permissions and rules
    "di_code/tools/process/protected.py",  # protected paths
    "di_code/system/files/opener.py",  # the file opener
    "di_code/system/files/resolve.py",
    "di_code/ai/redaction.py",  # keys out of output
    "di_code/config/trust.py",  # trusted folders
)
"""The code whose failure lets something through: a floor, not only a report."""
NOT_YET = (
    "di_code/session/git_run.py",  # the git runner
    "di_code/system/children.py",  # every child process
    "di_code/session/undo_plan.py",  # undo planning
)
"""Guarded code not yet at the floor (67-89% on the tests that reach it, measured without the
rest of the suite): reported, and moved to GUARDED once its tests bring it there."""


def percent(covered: int, total: int) -> float:
    return 100.0 if total == 0 else 100.0 * covered / total


def share(summary: dict[str, int]) -> float:
    """coverage.py's own measure with branches on: lines and branch arcs taken together."""
    covered = summary["covered_lines"] + summary["covered_branches"]
    return percent(covered, summary["num_statements"] + summary["num_branches"])


def package_of(path: str) -> str:
    parts = Path(path).parts
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def main() -> int:
    report = Path(".coverage.json")
    subprocess.run([sys.executable, "-m", "coverage", "json", "-q", "-o", str(report)], check=True)
    files = json.loads(report.read_text())["files"]
    report.unlink()
    packages: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for path, data in files.items():
        for key, value in data["summary"].items():
            if isinstance(value, int):
                packages[package_of(path)][key] += value
    print(f"{'package':<28} {'lines':>7} {'branches':>9} {'total':>7}")
    for name, summary in sorted(packages.items()):
        lines = percent(summary["covered_lines"], summary["num_statements"])
        branches = percent(summary["covered_branches"], summary["num_branches"])
        print(f"{name:<28} {lines:6.1f}% {branches:8.1f}% {share(summary):6.1f}%")
    print(f"\nguarded code (each at least {FLOOR:g}%):")
    under = []
    for path in GUARDED:
        summary = files.get(path, {}).get("summary")
        value = 0.0 if summary is None else share(summary)
        print(f"  {path:<40} {value:6.1f}%")
        if value < FLOOR:
            under.append(path)
    print(f"guarded code not yet held to {FLOOR:g}%:")
    for path in NOT_YET:
        summary = files.get(path, {}).get("summary")
        print(f"  {path:<40} {0.0 if summary is None else share(summary):6.1f}%")
    if under:
        print(f"coverage: under {FLOOR:g}%: {', '.join(under)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
