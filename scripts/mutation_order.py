"""A pytest plugin for scripts/mutation.sh: each mutant's tests run fastest first.

mutmut runs a mutant against only the tests it saw reach the mutated function, with `-x`, but
hands them to pytest as an unordered set: a mutant that a 0.02 s test kills could first sit
through a 10 s property test. mutmut recorded each test's duration in `mutmut-stats.json` (in
the folder the tests run from); ordered by it, a killed mutant costs about its fastest killing
test. A survivor still runs every test, and the first (stats) run, before durations exist, keeps
pytest's order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

STATS = Path("mutmut-stats.json")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    try:
        durations: dict[str, float] = json.loads(STATS.read_text())["duration_by_test"]
    except (OSError, ValueError, KeyError):
        return
    slowest = max(durations.values(), default=0.0)
    items.sort(key=lambda item: durations.get(item.nodeid, slowest))
