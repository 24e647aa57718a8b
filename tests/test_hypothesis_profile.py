"""Every property test runs under the one Hypothesis profile of tests/conftest.py: no
per-example deadline (a loaded machine must not fail a property), set in one place."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import settings

TESTS = Path(__file__).parent
OWN_TIMING = re.compile(r"deadline\s*=|HealthCheck\.too_slow")


def test_the_profile_has_no_deadline() -> None:
    assert settings.default.deadline is None


def test_no_property_test_sets_its_own_timing() -> None:
    setting = [
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("*.py")
        if path.name != "conftest.py"
        and "from hypothesis" in (text := path.read_text())
        and OWN_TIMING.search(text)
    ]
    assert setting == []
