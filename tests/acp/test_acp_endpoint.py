"""Issue 40 item 6: a model or mode change keeps the endpoint. `di-code acp --base-url A
--api-key K` with the provider's own URL (here a second loopback server, B, as
OPENAI_BASE_URL) and another key in the environment: whatever the editor chooses in the model
select or the mode, each request with K goes to A, and nothing reaches B."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import PROTOCOL_VERSION  # noqa: E402
from acp.stdio import spawn_agent_process  # noqa: E402

from tests.cli.conftest import API_KEY, DI_CODE, cli_env  # noqa: E402
from tests.support.acp_editor import TIMEOUT, RecordingClient, prompt  # noqa: E402
from tests.support.llm_server import LLMServer, Turn  # noqa: E402

GIVEN_KEY = "sk-given-for-server-a-0001"


@pytest.fixture
def public() -> Iterator[LLMServer]:
    """The provider's public endpoint as the environment names it: nothing may reach it."""
    with LLMServer() as server:
        yield server


@contextlib.asynccontextmanager
async def editor_on(
    given: LLMServer, public: LLMServer, home: Path, *args: str
) -> AsyncIterator[Any]:
    """`di-code acp --base-url GIVEN --api-key GIVEN_KEY ARGS` started by an editor whose
    environment names the public endpoint and the environment's key."""
    env = {**cli_env(home, public), "OPENAI_API_KEY": API_KEY}
    argv = ["acp", "--base-url", given.openai_base_url, "--api-key", GIVEN_KEY, *args]
    async with spawn_agent_process(RecordingClient(), DI_CODE, *argv, env=env) as (conn, _):
        await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT)
        yield conn


async def test_choosing_a_model_or_a_mode_keeps_the_given_url_and_key(
    llm_server: LLMServer, public: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    llm_server.script(*(Turn(text=f"answer {n}") for n in range(4)))
    async with editor_on(llm_server, public, di_code_home, "--model", "openai/test-model") as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await _choose_and_prompt(conn, session.session_id)
    assert public.requests == []
    assert [r.body["model"] for r in llm_server.requests] == [
        "test-model", "test-model", "other-model", "other-model"
    ]  # fmt: skip
    assert {r.headers["authorization"] for r in llm_server.requests} == {f"Bearer {GIVEN_KEY}"}


async def _choose_and_prompt(conn: Any, sid: str) -> None:
    await prompt(conn, sid, "first")
    for value in ("openai/test-model", "openai/other-model"):  # the same model again, another
        await conn.set_config_option(config_id="model", session_id=sid, value=value)
        await prompt(conn, sid, f"after choosing {value}")
    await conn.set_config_option(config_id="mode", session_id=sid, value="read-only")
    await prompt(conn, sid, "after a mode change")
