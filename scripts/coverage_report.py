"""Branch coverage per package, and the guarded code held to its floor.

Reads coverage.py's combined data (`coverage combine` after `coverage run -m pytest`: the test
processes and every di-code or other Python they started). Prints each package's share of lines
and branches covered, then each guarded module's; exits 1 when a guarded module is under FLOOR.
CI (.ci/run) runs the guarded code's own tests (GUARDED) under coverage, so there the packages'
figures are what those tests reach; after the whole suite under coverage they are the suite's.

    .venv/bin/coverage run -m pytest $(.venv/bin/python scripts/coverage_report.py --tests)
    .venv/bin/coverage combine && .venv/bin/python scripts/coverage_report.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

FLOOR = 95.0
PERMISSION_TESTS = (
    "tests/tools/test_permissions.py",
    "tests/tools/test_permissions_bash.py",
    "tests/tools/test_permissions_grants.py",
    "tests/tools/test_permissions_job_input.py",
    "tests/tools/test_plan_mode.py",
)
GUARDED = {
    "di_code/tools/policy/permissions.py": PERMISSION_TESTS,  # permissions and rules
    "di_code/tools/policy/rules.py": PERMISSION_TESTS,  # one rule and what it matches
    "di_code/tools/policy/subcommands.py": PERMISSION_TESTS,  # where a grant's prefix ends
    "di_code/tools/process/protected.py": (  # protected paths
        "tests/tools/test_protected.py",
        "tests/tools/test_sandbox_protected.py",
    ),
    "di_code/system/files/opener.py": (  # the file opener
        "tests/test_guarded_files.py",
        "tests/system/test_opener_reads.py",
        "tests/system/test_file_door.py",
        "tests/system/test_opener_streams.py",
    ),
    "di_code/system/files/resolve.py": ("tests/tools/test_resolve.py",),
    "di_code/ai/redaction.py": ("tests/ai/test_redaction.py",),  # keys out of output
    "di_code/config/trust.py": (  # trusted folders
        "tests/config/test_trust.py",
        "tests/config/test_trust_same_bytes.py",
    ),
    "di_code/session/git_run.py": (  # the git runner
        "tests/session/test_git_run.py",
        "tests/test_guarded_git.py",
        "tests/session/test_git_runs_nothing.py",
        "tests/session/test_git_run_feed.py",
        "tests/session/test_git_run_settings.py",
        "tests/batch/test_clone_transports.py",
    ),
    "di_code/system/children.py": (  # every child process
        "tests/system/test_children_end.py",
        "tests/test_guarded_children.py",
        "tests/system/test_children_stopped_while_made.py",
        "tests/system/test_children_in_process.py",
    ),
    "di_code/session/undo_plan.py": (  # undo planning
        "tests/session/test_undo_apply.py",
        "tests/session/test_undo_failures.py",
        "tests/session/test_undo_history.py",
        "tests/session/test_undo_keeps_user_files.py",
        "tests/session/test_undo_proves_deletes.py",
        "tests/session/test_undo_property.py",
        "tests/session/test_undo_names.py",
    ),
}
"""The code whose failure lets something through, each module with the tests that hold it: a
floor, not only a report. CI runs these tests under coverage (`--tests` lists them)."""


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
    if sys.argv[1:] == ["--tests"]:
        print(" ".join(sorted({test for tests in GUARDED.values() for test in tests})))
        return 0
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
    if under:
        print(f"coverage: under {FLOOR:g}%: {', '.join(under)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
