"""`di-code acp` started by the ACP SDK's own client (`spawn_agent_process`), against the
loopback model server; every message it sends in a test is checked against the ACP v1 schema
when the test ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
async def agent(llm_server: LLMServer, di_code_home: Path) -> AsyncIterator[Any]:
    """A factory: `await agent(client, *args, env_extra={})` -> the connection to a running
    `di-code acp`."""
    from acp import PROTOCOL_VERSION
    from acp.stdio import spawn_agent_process

    from tests.support.acp_editor import TIMEOUT
    from tests.support.acp_schema import SentMessages

    opened: list[Any] = []
    sent = SentMessages()  # every message of every flow, checked against ACP v1 at the end

    async def start(
        client: Any, *args: str, capabilities: Any = None, env_extra: dict[str, str] | None = None
    ) -> Any:
        env = cli_env(di_code_home, llm_server, **(env_extra or {}))
        context = spawn_agent_process(client, DI_CODE, "acp", *args, env=env, observers=[sent])
        conn, process = await context.__aenter__()
        opened.append((context, process))
        hello = conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
        await asyncio.wait_for(hello, TIMEOUT)
        return conn

    yield start
    for context, _process in opened:
        await context.__aexit__(None, None, None)
    # the schema's load, jsonschema's import and every message's check are ~0.1 s of work:
    # on a thread, so pytest's loop (the editor's side) is not held at teardown
    await asyncio.to_thread(sent.check)


@pytest.fixture
def editor_env(llm_server: LLMServer, di_code_home: Path) -> dict[str, str]:
    """The environment the editor starts `di-code acp` with (and its terminals)."""
    return cli_env(di_code_home, llm_server)
