"""The sandbox tests' one gate: they need a working bubblewrap. Where it does not work they
skip with the reason, except in CI (CI=true, set by .ci/run): there a security test that
cannot run fails, so a lost bubblewrap cannot turn the sandbox suites green by skipping."""

from __future__ import annotations

import os

import pytest

from di_code.tools.process.sandbox import bubblewrap_works
from tests.support.processes import live_pids

needs_bubblewrap = pytest.mark.needs_bubblewrap
"""Marks a test (or, as `pytestmark`, a module) that runs real bubblewrap; tests/conftest.py
calls `require_bubblewrap` before each."""

MISSING = (
    "bubblewrap (bwrap) is missing or cannot make namespaces here; "
    "install it (apt-get install bubblewrap) to run the sandbox tests"
)


def in_ci() -> bool:
    return os.environ.get("CI") == "true"


def require_bubblewrap() -> None:
    """Return when bubblewrap works; else skip the test, or fail it in CI."""
    if bubblewrap_works():
        return
    if in_ci():
        pytest.fail(f"CI cannot run a sandbox test: {MISSING}", pytrace=False)
    pytest.skip(MISSING)


def sleeping(duration: str) -> list[int]:
    """The pids of live `sleep <duration>` processes (seen from this pid namespace)."""
    wanted = f"sleep\0{duration}\0".encode()
    return live_pids(lambda entry: (entry / "cmdline").read_bytes() == wanted)
