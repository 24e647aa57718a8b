"""MCP servers as tools: each server's tools appear to the model as `mcp__SERVER__TOOL`
(made to fit the providers' name rules and kept distinct by tools/extensions/tool_names.py).

Built on the official `mcp` SDK, which is imported only when a server is configured (it costs
several hundred milliseconds, so it is imported in a thread). Servers start in parallel, each
within its timeout; one that fails is one warning and the others go on. `run` waits for them
before its first request; the chat does not (`launch`): its prompt is ready at once and each
server's tools join once it is ready. Each server lives in its own task, because the
SDK's transports are context managers that must be entered and left in the same task; calls
from the agent loop go through the session that task holds. A stdio server gets only a safe
environment (the SDK's default: PATH, HOME, ...) plus its own `env`, never di-code's keys.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import json
import logging
import os
import shutil
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from di_code.agent.tool import ToolResult, ToolUpdate
from di_code.ai.redaction import header_secrets, register, register_url
from di_code.ai.types import ImageContent, TextContent, ToolResultContent
from di_code.system.abort import AbortSignal
from di_code.system.first_use import import_off_loop
from di_code.system.http_client import http_client
from di_code.tools.builtin.support.image_files import IMAGE_MAX_BYTES, SNIFF_BYTES, image_type
from di_code.tools.common.base import CheckedTool
from di_code.tools.common.errors import ToolError
from di_code.tools.extensions.mcp_config import McpServerConfig
from di_code.tools.extensions.tool_names import distinct_names
from di_code.tools.process.launcher import trusted_command_argv
from di_code.tools.process.program_env import path_outside

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult

logger = logging.getLogger(__name__)

STOP_TIMEOUT_S = 5.0

ServerState = Literal["starting", "ready", "failed", "stopped"]


@dataclass
class McpServer:
    """One configured server: its state, its tools once listed, and the task that holds it."""

    config: McpServerConfig
    errlog: TextIO
    state: ServerState = "starting"
    error: str = ""
    listed: list[Any] = field(default_factory=list)
    """The server's `mcp.types.Tool`s."""
    _session: ClientSession | None = None
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _settled: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    async def start(self) -> None:
        """Connect and list the tools, within the server's timeout; failures are kept in
        `state`/`error`, never raised."""
        self._task = asyncio.create_task(self._hold(), name=f"mcp:{self.name}")
        try:
            await asyncio.wait_for(self._settled.wait(), self.config.timeout)
        except TimeoutError:
            self._fail(f"did not start within {self.config.timeout:g} s")
            await self.stop()

    async def stop(self) -> None:
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        if self.state != "ready":  # still starting: nothing waits for _stop yet
            task.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT_S)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def call(self, tool: str, arguments: dict[str, Any], signal: AbortSignal) -> Any:
        session = self._session
        if session is None or self.state != "ready":
            raise ToolError(f"MCP server {self.name} is not running ({self.error or self.state})")
        timeout = timedelta(seconds=self.config.timeout)
        call = asyncio.ensure_future(session.call_tool(tool, arguments, timeout))

        def cancel(reason: object) -> None:
            call.cancel()

        signal.add_listener(cancel)
        try:
            return await call
        except asyncio.CancelledError:
            if signal.aborted:
                raise ToolError("Operation aborted") from None
            raise
        finally:
            signal.remove_listener(cancel)

    async def _hold(self) -> None:
        try:
            if not await _sdk_loaded(http=self.config.url is not None):
                self._fail(MISSING_SDK)
                return
            from mcp import ClientSession

            async with self._transport() as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                self.listed = await _all_tools(session)
                self._session, self.state = session, "ready"
                self._settled.set()
                await self._stop.wait()
        except BaseException as exc:  # the SDK raises exception groups from its task groups
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            if self.state == "starting":  # a failure said before (a timeout) stays said
                self._fail(_first_line(exc))
            elif not self._stop.is_set():
                self._fail(f"stopped: {_first_line(exc)}")
        finally:
            self._session = None
            if self.state in ("ready", "starting"):
                self.state = "stopped"
            self._settled.set()

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        config = self.config
        if config.url is not None:
            from mcp.client.streamable_http import streamable_http_client

            options = {"headers": dict(config.headers), "timeout": config.timeout}
            client = await http_client(config.url, trust_env=False, **options)
            async with client, streamable_http_client(config.url, http_client=client) as streams:
                yield streams[0], streams[1]
            return
        from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

        assert config.command is not None
        env = {**get_default_environment(), **config.env}
        if config.untrusted_folders:
            folders = [Path(folder) for folder in config.untrusted_folders]
            env["PATH"] = path_outside(env.get("PATH", os.defpath), folders)
        _check_command(config.command, env.get("PATH"), config.cwd)
        command, *args = trusted_command_argv([config.command, *config.args])
        params = StdioServerParameters(
            command=command,
            args=args,
            env=env,
            cwd=config.cwd,
            # bytes that are not UTF-8 become U+FFFD: the SDK's default ("strict") ends the
            # server's reader, and a call then waits out its whole timeout
            encoding_error_handler="replace",
        )
        async with stdio_client(params, errlog=self.errlog) as streams:
            yield streams[0], streams[1]

    def _fail(self, reason: str) -> None:
        self.state, self.error = "failed", reason
        self._settled.set()


def _check_command(command: str, path: str | None, cwd: str | None) -> None:
    """Raise what exec would for a command that cannot be run (the launcher that makes the
    server die with di-code would only exit, and the SDK would say "Connection closed")."""
    if os.sep in command:
        command = os.path.join(cwd or os.getcwd(), command)
    if shutil.which(command, path=path) is None:
        raise FileNotFoundError(errno.ENOENT, "no such program", command)


MISSING_SDK = "MCP servers need the MCP SDK: pip install 'di-code[mcp]'"


async def _sdk_loaded(*, http: bool) -> bool:
    """Import the SDK's client, off the loop: the chat's prompt keeps answering keys.

    False when the SDK is not installed: it is an extra (see pyproject.toml)."""
    try:
        await import_off_loop("mcp")
    except ModuleNotFoundError as exc:
        if exc.name == "mcp":
            return False
        raise
    await import_off_loop("mcp.client.streamable_http" if http else "mcp.client.stdio")
    return True


async def _all_tools(session: ClientSession) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(cursor)
        tools.extend(page.tools)
        cursor = page.nextCursor
        if not cursor:
            return tools


def _first_line(exc: BaseException) -> str:
    """The innermost reason of a (possibly grouped) exception, in one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


@dataclass(frozen=True, slots=True)
class McpTool(CheckedTool):
    """An AgentTool that calls one tool of one MCP server."""

    server: McpServer
    remote_name: str
    name: str
    description: str
    parameters: dict[str, Any]

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolResult:
        result = await self.server.call(self.remote_name, params, signal)
        return result_from_mcp(result)


def _schema(listed: Any) -> dict[str, Any]:
    schema = listed.inputSchema if isinstance(listed.inputSchema, dict) else {}
    return schema or {"type": "object"}


def result_from_mcp(result: CallToolResult) -> ToolResult:
    """Text, images and embedded resources as tool result content; a server error stays an
    error result the model can read."""
    content = [part for block in result.content for part in _content(block)]
    if not content and result.structuredContent is not None:
        content = [TextContent(json.dumps(result.structuredContent, ensure_ascii=False))]
    return ToolResult(content or [TextContent("(no output)")], is_error=bool(result.isError))


def _content(block: Any) -> list[ToolResultContent]:
    kind = getattr(block, "type", None)
    if kind == "text":
        return [TextContent(block.text)]
    if kind == "image":
        return [_image(block.data, block.mimeType)]
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return [TextContent(f"[resource {resource.uri}]\n{text}")]
        mime = resource.mimeType or "application/octet-stream"
        if mime.startswith("image/"):
            return [_image(resource.blob, mime)]
        return [TextContent(f"[resource {resource.uri}: {mime}, binary content not shown]")]
    if kind == "resource_link":
        return [TextContent(f"[resource link {block.uri}: {block.name}]")]
    return [TextContent(f"[{kind} content not shown]")]


def _image(data: str, claimed: str) -> ToolResultContent:
    """An image as its bytes say (judged as `read` judges a file), or a note: what a server
    calls an image may be anything, and a provider refuses a request holding one that is not
    (and with it every later request of the conversation)."""
    try:
        raw = base64.b64decode(data)  # line breaks in it are dropped, as MIME's are
    except ValueError:
        return TextContent(f"[image ({claimed}) not shown: its data is not base64]")
    mime = image_type(raw[:SNIFF_BYTES])
    if mime is None:
        return TextContent(f"[image ({claimed}) not shown: not a PNG, JPEG, GIF or WebP image]")
    if len(raw) > IMAGE_MAX_BYTES:
        return TextContent(f"[image ({mime}) not shown: {len(raw)} bytes, more than a model takes]")
    return ImageContent(base64.b64encode(raw).decode("ascii"), mime)


class McpServers:
    """The configured servers of a session: started together, stopped together."""

    def __init__(self, configs: list[McpServerConfig], errlog: TextIO | None = None) -> None:
        for config in configs:  # an HTTP server's credentials are hidden like a provider's
            register(*header_secrets(config.headers))
            register_url(config.url)
        self._errlog = errlog or open(os.devnull, "w")  # noqa: SIM115 (closed in aclose)
        self.servers = [McpServer(c, self._errlog) for c in configs if c.enabled]
        self.disabled = [c.name for c in configs if not c.enabled]
        self._starts: list[asyncio.Task[McpServer]] = []
        self._handed_out: set[str] = set()

    def launch(self) -> None:
        """Start every server at once in the background; `settled` tells as each is done."""
        self._starts = [asyncio.create_task(self._start(server)) for server in self.servers]

    async def start(self) -> list[str]:
        """Start every server at once and wait for all (each within its own timeout); one
        warning line per server that failed."""
        self.launch()
        await asyncio.gather(*self._starts)
        return [failure(server) for server in self.servers if server.state == "failed"]

    async def settled(self) -> AsyncIterator[McpServer]:
        """Each launched server once it is ready or has failed, the first to settle first."""
        for next_settled in asyncio.as_completed(self._starts):
            yield await next_settled

    def progress(self) -> str:
        """How many servers are ready, for the chat's status line."""
        ready = sum(server.state == "ready" for server in self.servers)
        return f"mcp: {ready}/{len(self.servers)} ready"

    def new_tools(self, taken: Collection[str] = ()) -> list[McpTool]:
        """The tools of servers that became ready since the last call (each handed out once),
        named apart from `taken`."""
        fresh = {s.name for s in self.servers if s.state == "ready"} - self._handed_out
        self._handed_out |= fresh
        return [tool for tool in self.tools(taken) if tool.server.name in fresh]

    @staticmethod
    async def _start(server: McpServer) -> McpServer:
        await server.start()
        return server

    def tools(self, taken: Collection[str] = ()) -> list[McpTool]:
        """The ready servers' tools, named so that none has a name in `taken` (the other
        tools of the session) or another's."""
        return [
            McpTool(
                server,
                listed.name,
                name,
                listed.description or f"{listed.name} (from the MCP server {server.name})",
                _schema(listed),
            )
            for server, listed, name in self._named(taken)
            if server.state == "ready"
        ]

    def _named(self, taken: Collection[str] = ()) -> list[tuple[McpServer, Any, str]]:
        """Every listed tool with its name for the model: `mcp__SERVER__TOOL` when that is a
        name providers accept and no other tool has (tools/extensions/tool_names.py)."""
        listed = [(server, tool) for server in self.servers for tool in server.listed]
        names = distinct_names(
            [
                (f"mcp__{server.name}__{tool.name}", json.dumps([server.name, tool.name]))
                for server, tool in listed
            ],
            taken,
        )
        return [(server, tool, name) for (server, tool), name in zip(listed, names, strict=True)]

    async def aclose(self) -> None:
        for starting in self._starts:
            starting.cancel()
        await asyncio.gather(*(server.stop() for server in self.servers))
        self._errlog.close()

    def status_lines(self) -> list[str]:
        """One line per server and its tools, for `/mcp` and `di-code mcp list`."""
        lines = []
        named = self._named()
        for server in self.servers:
            config = server.config
            where = config.url or " ".join([config.command or "", *config.args])
            state = f"{server.state}: {server.error}" if server.error else server.state
            lines.append(f"{server.name}  ({state})  {where}")
            lines += [f"    {name}" for owner, _, name in named if owner is server]
        lines += [f"{name}  (disabled)" for name in self.disabled]
        return lines or ["No MCP servers configured."]


def failure(server: McpServer) -> str:
    """The one line that says a server did not start, and why."""
    return f"MCP server {server.name} failed to start: {server.error}"
