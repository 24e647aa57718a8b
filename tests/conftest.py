"""Every test gets its own DI_CODE_HOME, so nothing touches the real ~/.di-code."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from di_code.ai.redaction import forget_all
from tests.support.llm_server import LLMServer


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
