"""`di-code acp` ended by a signal while a prompt runs a command: the exit code is 128 + the
signal's number and no process of its tree is left (each carries a marker in its environment)."""

from __future__ import annotations

import asyncio
import signal
import uuid
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import PROTOCOL_VERSION  # noqa: E402
from acp.stdio import spawn_agent_process  # noqa: E402

from tests.cli.conftest import DI_CODE, cli_env  # noqa: E402
from tests.support.acp_editor import TIMEOUT, RecordingClient, prompt  # noqa: E402
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn  # noqa: E402
from tests.support.processes import MARK, marked, wait_until  # noqa: E402
from tests.support.stops import EXIT_BOUND  # noqa: E402


@pytest.mark.parametrize(("number", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
async def test_a_signal_mid_command_ends_acp_and_its_children(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, number: int, code: int
) -> None:
    started = workspace / "started"
    command = f"touch {started}; sleep 1000"
    llm_server.script(Turn(tool_calls=(ToolCallSpec("bash", {"command": command}),)))
    mark = uuid.uuid4().hex
    env = cli_env(di_code_home, llm_server, **{MARK: mark})
    client: Any = RecordingClient()
    args = ("acp", "--permission-mode", "auto", "--sandbox", "off")
    try:
        async with spawn_agent_process(client, DI_CODE, *args, env=env) as (conn, process):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT)
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            running = asyncio.create_task(prompt(conn, session.session_id, "sleep"))
            for _ in range(400):
                if started.exists():
                    break
                await asyncio.sleep(0.05)
            process.send_signal(number)
            assert await asyncio.wait_for(process.wait(), EXIT_BOUND) == code
            running.cancel()
    finally:
        wait_until(lambda: not marked(mark), "every process of the tree to end")
