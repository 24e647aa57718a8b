"""The diff preview of a write or edit under `di-code acp` (issue 32's file opener): it reads
only what the tool itself may, through the file opener. Real `di-code acp` over pipes, driven by
the ACP SDK's own client, against the loopback model server."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import PROTOCOL_VERSION  # noqa: E402
from acp.schema import ClientCapabilities, FileSystemCapabilities  # noqa: E402
from acp.stdio import spawn_agent_process  # noqa: E402

from tests.cli.conftest import DI_CODE, cli_env  # noqa: E402
from tests.support.acp_editor import TIMEOUT, EditorClient, RecordingClient, prompt  # noqa: E402
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn  # noqa: E402

Start = Callable[..., Any]


@pytest.fixture
async def acp_agent(llm_server: LLMServer, di_code_home: Path) -> AsyncIterator[Start]:
    """`await acp_agent(client, fs=False)` -> (connection, process) of a running `di-code acp`
    in auto mode (no question: the preview is all that stands between call and tool)."""
    opened: list[Any] = []

    async def start(client: Any, fs: bool = False) -> tuple[Any, Any]:
        env = cli_env(di_code_home, llm_server)
        args = ("acp", "--permission-mode", "auto", "--sandbox", "off")
        context = spawn_agent_process(client, DI_CODE, *args, env=env)
        conn, process = await context.__aenter__()
        opened.append(context)
        files = FileSystemCapabilities(read_text_file=True, write_text_file=True)
        capabilities = ClientCapabilities(fs=files) if fs else None
        hello = conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
        await asyncio.wait_for(hello, TIMEOUT)
        return conn, process

    yield start
    for context in opened:
        await context.__aexit__(None, None, None)


def writes(*paths: str) -> list[Turn]:
    """One turn per path: a write there, then an edit; then a closing answer."""
    turns = []
    for path in paths:
        turns.append(Turn(tool_calls=(ToolCallSpec("write", {"path": path, "content": "x"}),)))
        edit = {"path": path, "old_text": "secret", "new_text": "leaked"}
        turns.append(Turn(tool_calls=(ToolCallSpec("edit", edit),)))
    return [*turns, Turn(text="done")]


@pytest.fixture
def outside(tmp_path: Path, workspace: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("secret\n")
    (workspace / "linked").symlink_to(folder)
    return folder


async def test_the_editor_is_never_asked_for_a_file_outside_the_workspace_or_a_fifo(
    acp_agent: Start, llm_server: LLMServer, workspace: Path, outside: Path
) -> None:
    (workspace / "notes.txt").write_text("secret\n")
    os.mkfifo(workspace / "pipe")
    llm_server.script(
        *writes("../outside/secret.txt", str(outside / "secret.txt"), "linked/secret.txt")[:-1],
        *writes("pipe")[:-1],
        Turn(tool_calls=(ToolCallSpec("read", {"path": "pipe"}),)),
        *writes("notes.txt"),
    )
    client = EditorClient({str(workspace / "notes.txt"): "secret\n"})
    conn, _ = await acp_agent(client, fs=True)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    reply = await prompt(conn, session.session_id, "write everywhere")
    assert reply.stop_reason == "end_turn"
    read = [path for kind, path in client.served if kind == "read"]
    assert read and all(Path(p).resolve().is_relative_to(workspace.resolve()) for p in read)
    assert str(workspace / "pipe") not in [path for _, path in client.served]
    assert (outside / "secret.txt").read_text() == "secret\n"


async def test_a_fifo_target_neither_freezes_the_agent_nor_its_cancel(
    acp_agent: Start, llm_server: LLMServer, workspace: Path, outside: Path
) -> None:
    os.mkfifo(workspace / "pipe")
    os.mkfifo(outside / "pipe")
    llm_server.script(
        *writes("pipe", "../outside/pipe", "linked/pipe")[:-1],
        Turn(text="thinking", fault="stall", fault_after=1),
    )
    client = RecordingClient()
    conn, _ = await acp_agent(client)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    running = asyncio.create_task(prompt(conn, session.session_id, "write the pipes"))
    for _ in range(TIMEOUT * 20):
        if len(llm_server.requests) == 7 or running.done():
            break
        await asyncio.sleep(0.05)
    assert len(llm_server.requests) == 7, "a preview froze the agent"
    await conn.cancel(session_id=session.session_id)
    reply = await asyncio.wait_for(running, 10)
    assert reply.stop_reason == "cancelled"
    results = [m for m in llm_server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert all("Not a regular file" in r["content"] or "outside" in r["content"] for r in results)


async def test_a_write_to_dev_zero_reads_nothing_of_it(
    acp_agent: Start, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "zero").symlink_to("/dev/zero")
    targets = ["/dev/zero", "zero"]
    if os.geteuid() == 0:  # a device node inside the workspace itself
        os.mknod(workspace / "device", stat.S_IFCHR | 0o666, os.makedev(1, 5))
        targets.append("device")
    llm_server.script(*writes(*targets))
    client = RecordingClient()
    conn, process = await acp_agent(client)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    reply = await prompt(conn, session.session_id, "write to zero")
    assert reply.stop_reason == "end_turn"
    status = Path(f"/proc/{process.pid}/status").read_text()
    peak_kib = int(
        next(line for line in status.splitlines() if line.startswith("VmHWM")).split()[1]
    )
    assert peak_kib < 400 * 1024, f"the agent grew to {peak_kib // 1024} MB"
