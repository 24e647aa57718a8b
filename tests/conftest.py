"""Every test gets its own DI_CODE_HOME, so nothing touches the real ~/.di-code. With
DI_CODE_LOOP_WATCH=1 every test fails on an event-loop callback over 100 ms, its own or a
di-code's it started (tests/support/loop_watch.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from di_code.ai.redaction import forget_all
from tests.support import loop_watch
from tests.support.bubblewrap import require_bubblewrap
from tests.support.llm_server import LLMServer
from tests.support.permission_faults import require_permission_faults

# One Hypothesis profile for every property test: no per-example deadline and no too-slow
# health check, which time on the wall clock (the machine may be loaded); a test sets only
# its own max_examples.
settings.register_profile("di-code", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("di-code")

if loop_watch.enabled():
    os.environ["PYTHONASYNCIODEBUG"] = "1"
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(
            None,
            [str(Path(__file__).parent / "support" / "loopwatch"), os.environ.get("PYTHONPATH")],
        )
    )
    loop_watch.warm()
    WATCH = loop_watch.install()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "needs_bubblewrap: runs real bubblewrap (tests/support/bubblewrap.py)"
    )
    config.addinivalue_line(
        "markers",
        "needs_permission_faults: file modes must bind (tests/support/permission_faults.py)",
    )
    if loop_watch.enabled():  # pytest-asyncio's loops: its own switch (it overrides asyncio's)
        config.option.asyncio_debug = True


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_bubblewrap"):
        require_bubblewrap()  # skipped without it; failed in CI
    if item.get_closest_marker("needs_permission_faults"):
        require_permission_faults()  # skipped as root; run in .ci/run's permission pass


@pytest.fixture(autouse=True)
def di_code_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("di-code-home")
    monkeypatch.setenv("DI_CODE_HOME", str(home))
    monkeypatch.setenv("DI_CODE_LSP", "off")  # the LSP tests turn it on; others keep exact texts
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "DI_CODE_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(autouse=True)
def no_secrets_left() -> Iterator[None]:
    """Secrets one test registered (di_code.ai.redaction) are not hidden in the next."""
    yield
    forget_all()


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """A loopback model server (OpenAI + Anthropic wire formats); see tests/support/llm_server."""
    with LLMServer() as server:
        yield server


@pytest.fixture(autouse=True)
def loop_watch_verdict(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Under the loop watch: the slow callbacks this test's loops (and its di-codes') had."""
    if not loop_watch.enabled():
        yield
        return
    log = tmp_path_factory.mktemp("loop-watch") / "slow.log"
    monkeypatch.setenv(loop_watch.LOG_VARIABLE, str(log))
    WATCH.seen.clear()
    yield
    slow = WATCH.seen + loop_watch.seen_in(log)
    if slow:
        pytest.fail("the event loop was held over 100 ms:\n" + "\n".join(slow), pytrace=False)
