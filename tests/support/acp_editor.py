"""Editors for `di-code acp` tests, on the ACP SDK's own client side: one that records every
update and answers permission questions, one that also serves files from its buffers, and one
that also runs commands in terminals it spawns itself (real processes)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    ToolCallStart,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acp.stdio import spawn_stdio_connection

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.acp_schema import SentMessages, schema_problems
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

TIMEOUT = 30


class RecordingClient:
    """An editor: records every update; answers permission questions with `answer`."""

    def __init__(self, answer: str | None = "allow_once") -> None:
        self.updates: list[tuple[str, Any]] = []
        self.asked: list[Any] = []
        self.answer = answer

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, [option.option_id for option in options]))
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    def of(self, kind: type, session_id: str | None = None) -> list[Any]:
        return [u for s, u in self.updates if isinstance(u, kind) and session_id in (None, s)]

    def said(self, session_id: str | None = None) -> str:
        return "".join(u.content.text for u in self.of(AgentMessageChunk, session_id))

    async def offered(self) -> list[Any]:
        """The commands offered, once their update has come (it follows session/new's answer)."""
        for _ in range(TIMEOUT * 20):
            if updates := self.of(AvailableCommandsUpdate):
                return list(updates[-1].available_commands)
            await asyncio.sleep(0.05)
        raise AssertionError("no available_commands_update")

    async def tool_started(self) -> None:
        """Wait until the agent has said a tool call started (a prompt is then mid-turn)."""
        for _ in range(TIMEOUT * 20):
            if self.of(ToolCallStart):
                return
            await asyncio.sleep(0.05)
        raise AssertionError("no tool call started")


class EditorClient(RecordingClient):
    """An editor that serves the agent's file reads and writes from its own buffers."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__()
        self.buffers = buffers
        self.served: list[tuple[str, str]] = []

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> Any:
        self.served.append(("read", path))
        if path not in self.buffers:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> Any:
        self.served.append(("write", path))
        self.buffers[path] = content
        return WriteTextFileResponse()


@dataclass
class Terminal:
    """A command the editor runs: its process (in its own process group), its output."""

    command: list[str]
    env: dict[str, str]
    cwd: str | None
    limit: int | None
    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None

    async def read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(65536):
            self.output += chunk
            if self.limit is not None and len(self.output) > self.limit:
                del self.output[: len(self.output) - self.limit]
                self.truncated = True

    def status(self) -> dict[str, Any]:
        code = self.process.returncode
        if code is None:
            return {}
        if code < 0:
            return {"exit_code": None, "signal": signal.Signals(-code).name}
        return {"exit_code": code, "signal": None}


class TerminalClient(RecordingClient):
    """An editor with terminals: each `terminal/create` starts a real process with the
    editor's own environment (`base_env`, what it started the agent with) plus the variables
    sent; `log` records the calls in order, with the permission questions."""

    def __init__(self, base_env: Mapping[str, str], answer: str | None = "allow_once") -> None:
        super().__init__(answer)
        self.base_env = dict(base_env)
        self.terminals: dict[str, Terminal] = {}
        self.log: list[tuple[str, str]] = []
        self._ids = itertools.count(1)

    async def request_permission(self, session_id: str, tool_call: Any, **kw: Any) -> Any:
        self.log.append(("ask", tool_call.tool_call_id))
        return await super().request_permission(session_id, tool_call, **kw)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **_: Any,
    ) -> CreateTerminalResponse:
        terminal_id = f"term-{next(self._ids)}"
        variables = {**self.base_env, **{v.name: v.value for v in env or []}}
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env=variables, start_new_session=True,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        terminal = Terminal([command, *(args or [])], variables, cwd, output_byte_limit, process)
        terminal.reader = asyncio.create_task(terminal.read())
        self.terminals[terminal_id] = terminal
        self.log.append(("create", terminal_id))
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.log.append(("output", terminal_id))
        terminal = self.terminals[terminal_id]
        status = terminal.status()
        return TerminalOutputResponse(
            output=terminal.output.decode("utf-8", "replace"),
            truncated=terminal.truncated,
            exit_status=status or None,
        )

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        terminal = self.terminals[terminal_id]
        await terminal.process.wait()
        assert terminal.reader is not None
        await terminal.reader
        self.log.append(("exited", terminal_id))
        return WaitForTerminalExitResponse(**terminal.status())

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.log.append(("kill", terminal_id))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.terminals[terminal_id].process.pid, signal.SIGKILL)
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.log.append(("release", terminal_id))
        terminal = self.terminals[terminal_id]
        if terminal.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(terminal.process.pid, signal.SIGKILL)
        return ReleaseTerminalResponse()


async def prompt(conn: Any, session_id: str, text: str) -> Any:
    return await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[text_block(text)]), TIMEOUT
    )


async def raw_acp(home: Path, server: LLMServer, workspace: Path) -> asyncio.subprocess.Process:
    """`di-code acp` with its pipes bare, for bytes no SDK client would send."""
    return await asyncio.create_subprocess_exec(
        DI_CODE,
        "acp",
        cwd=workspace,
        env=cli_env(home, server),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def next_message(process: asyncio.subprocess.Process) -> Any:
    """The next line `di-code acp` writes, decoded (and checked against ACP v1)."""
    assert process.stdout is not None
    message = json.loads(await asyncio.wait_for(process.stdout.readline(), TIMEOUT))
    assert schema_problems(message) == [], message
    return message


EDITOR_FS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))


class SavingEditor(RecordingClient):
    """An editor whose buffers are saved as they are written: it reads and writes the disk,
    and records every write it was asked for, with its text."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[str, str]] = []

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> Any:
        try:
            return ReadTextFileResponse(content=Path(path).read_bytes().decode("utf-8"))
        except OSError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> Any:
        self.writes.append((path, content))
        Path(path).write_bytes(content.encode("utf-8"))
        return WriteTextFileResponse()


async def saving_session(agent: Any, workspace: Path) -> tuple[SavingEditor, Any, str]:
    """A SavingEditor with file-system capabilities, connected to `di-code acp
    --permission-mode auto --sandbox off` by the `agent` fixture, and a new session of it in
    `workspace`: (editor, connection, session id)."""
    client = SavingEditor()
    conn = await agent(
        client, "--permission-mode", "auto", "--sandbox", "off", capabilities=EDITOR_FS
    )
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    return client, conn, session.session_id


def calls(*specs: tuple[str, dict[str, Any]]) -> Turn:
    return Turn(tool_calls=tuple(ToolCallSpec(name, args) for name, args in specs))


def edit(path: str, old: str, new: str) -> tuple[str, dict[str, Any]]:
    return "edit", {"path": path, "edits": [{"old_text": old, "new_text": new}]}


class UnsavedEditor(SavingEditor):
    """An editor in which the user has typed into a buffer without saving it."""

    def __init__(self) -> None:
        super().__init__()
        self.unsaved: dict[str, str] = {}

    async def read_text_file(self, session_id: str, path: str, **kw: Any) -> Any:
        if path in self.unsaved:
            return ReadTextFileResponse(content=self.unsaved[path])
        return await super().read_text_file(session_id, path, **kw)

    async def write_text_file(self, session_id: str, path: str, content: str, **kw: Any) -> Any:
        self.unsaved.pop(path, None)  # the buffer is replaced: the user's typing is gone
        return await super().write_text_file(session_id, path, content, **kw)


class Editor:
    """The SDK's own connection, as an editor that takes every update and asks nothing."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    async def ask(self, method: str, **params: Any) -> Any:
        return await asyncio.wait_for(self.conn.send_request(method, params), TIMEOUT)

    async def new(self, cwd: Path) -> str:
        reply = await self.ask("session/new", cwd=str(cwd), mcpServers=[])
        session_id: str = reply["sessionId"]
        return session_id

    async def prompt(self, session_id: str, text: str) -> Any:
        prompt = [{"type": "text", "text": text}]
        return await self.ask("session/prompt", sessionId=session_id, prompt=prompt)


async def _take_all(method: str, params: Any, is_notification: bool) -> Any:
    return None


@pytest.fixture
async def editor(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> AsyncIterator[Editor]:
    """`di-code acp` started in the workspace, as an editor starts it in its project."""
    env = cli_env(di_code_home, llm_server)
    sent = SentMessages()
    args = ("acp", "--permission-mode", "auto")
    async with spawn_stdio_connection(
        _take_all, DI_CODE, *args, env=env, cwd=workspace, observers=[sent]
    ) as (conn, _process):
        client = Editor(conn)
        hello = await client.ask("initialize", protocolVersion=PROTOCOL_VERSION)
        assert hello["agentCapabilities"]["sessionCapabilities"]["delete"] == {}
        yield client
    sent.check()
