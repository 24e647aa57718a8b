"""scripts/mutation.sh's second pass, run in a module's scratch copy after mutmut's first: every
function of the module gets all of the module's tests in mutmut's stats (mutmut had given each
only the tests it saw call it in the test process), and the mutants that survived or that no
test reached are printed, one a line, for `mutmut run` to run again against those tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mutmut.utils.format_utils import mangled_name_from_mutant_name

STATS = Path("mutants/mutmut-stats.json")
AGAIN = {"survived", "no tests"}


def main() -> None:
    listed = subprocess.run(
        [str(Path(sys.executable).with_name("mutmut")), "results", "--all", "true"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    again = [
        name.strip()
        for name, _, status in (line.rpartition(": ") for line in listed.splitlines())
        if status.strip() in AGAIN
    ]
    if not again:
        return
    stats = json.loads(STATS.read_text())
    tests = sorted(stats["duration_by_test"])
    for name in again:
        stats["tests_by_mangled_function_name"][mangled_name_from_mutant_name(name)] = tests
    STATS.write_text(json.dumps(stats, indent=4))
    print("\n".join(again))


if __name__ == "__main__":
    main()
