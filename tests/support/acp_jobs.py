"""An editor that runs background jobs in its terminals, and a prompt's tool results (the ACP
jobs tests and their attack)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import ClientCapabilities

from tests.support.acp_editor import TIMEOUT, TerminalClient
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.processes import live_pids

TERMINAL = ClientCapabilities(terminal=True)


def call(name: str, **arguments: Any) -> Turn:
    return Turn(tool_calls=(ToolCallSpec(name, arguments),))


def results(llm_server: LLMServer) -> list[str]:
    """The tool results the model was sent, in order."""
    messages = llm_server.requests[-1].body["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


async def logged(client: TerminalClient, entry: tuple[str, str]) -> None:
    for _ in range(TIMEOUT * 20):
        if entry in client.log:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never logged {entry}: {client.log}")


async def started(
    agent: Any, client: TerminalClient, workspace: Path, offers: ClientCapabilities = TERMINAL
) -> tuple[Any, str]:
    conn = await agent(client, "--permission-mode", "auto", "--sandbox", "off", capabilities=offers)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    return conn, session.session_id


class DeafToKills(TerminalClient):
    """An editor that never answers a kill or a release, and kills nothing."""

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.log.append(("kill", terminal_id))
        await asyncio.Event().wait()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.log.append(("release", terminal_id))
        await asyncio.Event().wait()


class NoExitWaits(TerminalClient):
    """An editor that does not implement `terminal/wait_for_exit` (it answers that the method
    is not found); its terminals run and are read as any other."""

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        raise RequestError.method_not_found("terminal/wait_for_exit")


class SilentOutput(NoExitWaits):
    """`terminal/output` is never answered either: nothing says the command exited."""

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.log.append(("output", terminal_id))
        await asyncio.Event().wait()


def marked(mark: str) -> list[int]:
    """The live processes whose environment carries `mark` (`DI_CODE_JOB=...`)."""
    return live_pids(lambda entry: mark.encode() in (entry / "environ").read_bytes().split(b"\0"))


def mark_of(editor: TerminalClient, terminal_id: str = "term-1") -> str:
    return f"DI_CODE_JOB={editor.terminals[terminal_id].env['DI_CODE_JOB']}"


async def none_left(mark: str) -> None:
    for _ in range(TIMEOUT * 10):
        if not marked(mark):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"processes carrying {mark} outlived their job: {marked(mark)}")
