"""Issue 40 item 6 in `run`: a subagent's model on the session's provider goes to the base URL
and with the key given on the command line, never to the URL the environment names for the
provider (here a second loopback server standing for its public endpoint)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import API_KEY, RunDiCode
from tests.support.agent_files import agent_file, script_one_task
from tests.support.llm_server import LLMServer

GIVEN_KEY = "sk-given-for-server-a-0001"


@pytest.fixture
def public() -> Iterator[LLMServer]:
    with LLMServer() as server:
        yield server


@pytest.mark.parametrize("owner", ["user", "project"])
def test_a_subagent_s_model_goes_where_the_key_was_given(
    run_di_code: RunDiCode, llm_server: LLMServer, public: LLMServer, workspace: Path,
    di_code_home: Path, owner: str,
) -> None:  # fmt: skip
    (workspace / ".git").mkdir()
    folder = di_code_home / "agents" if owner == "user" else workspace / ".di-code" / "agents"
    agent_file(folder, "openai/other-model")
    script_one_task(llm_server, "helper")
    given = ("--base-url", llm_server.openai_base_url, "--api-key", GIVEN_KEY)
    env = {"OPENAI_BASE_URL": public.openai_base_url, "OPENAI_API_KEY": API_KEY}
    done = run_di_code("run", *given, "--model", "openai/test-model", "go", env_extra=env)
    assert done.returncode == 0, done.stderr
    assert public.requests == []
    assert [r.body["model"] for r in llm_server.requests] == [
        "test-model", "other-model", "test-model"
    ]  # fmt: skip
    assert {r.headers["authorization"] for r in llm_server.requests} == {f"Bearer {GIVEN_KEY}"}
