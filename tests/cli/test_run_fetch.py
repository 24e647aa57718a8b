"""fetch in a real `di-code run`: it asks in ask mode, an allow rule naming the host lets it
run (and reach that host at a private address), a deny rule covers a domain's subdomains."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import RunDiCode, request_text
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.web_site import serve_site


@pytest.fixture
def site() -> Iterator[str]:
    yield from serve_site()


def fetch_then_answer(server: LLMServer, url: str) -> None:
    server.script(Turn(tool_calls=(ToolCallSpec("fetch", {"url": url}),)), Turn(text="done"))


def test_fetch_asks_in_ask_mode_and_an_allow_rule_for_the_host_lets_it_run(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, site: str
) -> None:
    fetch_then_answer(llm_server, f"{site}/page")
    assert run_di_code("run", "read the guide").returncode == 0
    assert "no terminal to ask" in request_text(llm_server.requests[-1].body)

    (di_code_home / "config.toml").write_text('[permissions]\nallow = ["fetch:127.0.0.1"]\n')
    fetch_then_answer(llm_server, f"{site}/page")
    assert run_di_code("run", "read the guide").returncode == 0
    assert "# Install" in request_text(llm_server.requests[-1].body)


def test_a_deny_rule_for_a_domain_covers_its_subdomains(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text('[permissions]\ndeny = ["fetch:example.com"]\n')
    fetch_then_answer(llm_server, "https://docs.example.com/x")
    assert run_di_code("run", "--yes", "read it").returncode == 0
    assert "a deny rule in the settings blocks fetch" in request_text(llm_server.requests[-1].body)
