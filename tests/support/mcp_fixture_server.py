"""A real MCP server for the tests, written with the official SDK.

`python -m tests.support.mcp_fixture_server stdio|http PORT`. It writes its pid to
`$MCP_FIXTURE_DIR/<name>.pid` when it starts (so a test can check it started, and that it is
gone after di-code exits) and `<name>.slow` when its slow tool begins. With
`MCP_FIXTURE_START_DELAY=SECONDS` it waits that long before it answers at all (a server slow
to start); with `MCP_FIXTURE_INIT_DELAY=SECONDS` it reads the client's `initialize` and
sleeps that long before answering it (its lifespan, which runs first, sleeps; `<name>.init` is
written when it begins). With `MCP_FIXTURE_HELPER=1` it first starts a helper of its own in a
new session (`setsid`, out of the server's process group) that sleeps, and writes the helper's pid
to `<name>.helper`.

`scripted` instead of `stdio` runs a low-level server whose tools are whatever a test lists in
`MCP_FIXTURE_TOOLS` (JSON: name, description and inputSchema as sent, and what a call `does`,
one of SCRIPTED): names, schemas and behaviours no FastMCP function would give. With
`MCP_FIXTURE_LIST_DELAY=SECONDS` it waits that long before it answers `tools/list`
(`<name>.listing` is written when it is asked). A tool that `die`s or `hang`s writes
`<name>.called` first.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.fastmcp import Context, FastMCP, Image
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def marker(suffix: str) -> Path | None:
    folder = os.environ.get("MCP_FIXTURE_DIR")
    name = os.environ.get("MCP_FIXTURE_NAME", "server")
    return Path(folder) / f"{name}.{suffix}" if folder else None


@contextlib.asynccontextmanager
async def _slow_start(_: FastMCP) -> AsyncIterator[None]:
    path = marker("init")
    if path is not None:
        path.write_text("initializing")
    await anyio.sleep(float(os.environ.get("MCP_FIXTURE_INIT_DELAY", "0")))
    yield


def build(port: int = 0) -> FastMCP:
    # Only critical logs: nobody reads them, and the SDK logs a client leaving its SSE stream
    # as an error with a Rich traceback, drawn on the server's loop (0.13-0.19 s: the loop
    # watch, whose variables this process inherits, counts it as a test's own stall).
    server = FastMCP(
        "fixture", host="127.0.0.1", port=port, lifespan=_slow_start, log_level="CRITICAL"
    )

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two whole numbers."""
        return str(a + b)

    @server.tool()
    def picture() -> Image:
        """A one-pixel PNG."""
        return Image(data=PNG, format="png")

    @server.tool()
    def explode(reason: str) -> str:
        """Always fails."""
        raise ValueError(f"exploded: {reason}")

    @server.tool()
    def whoami(ctx: Context) -> str:  # type: ignore[type-arg]
        """The Authorization header the call came with (over HTTP)."""
        request = ctx.request_context.request
        headers = getattr(request, "headers", {})
        return f"you are {headers.get('authorization', 'nobody')}"

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleeps, to be aborted."""
        path = marker("slow")
        if path is not None:
            path.write_text("started")
        await anyio.sleep(seconds)
        return "slept"

    # Names providers do not accept as they are, that become alike when made to fit.
    for name, answer in NAME_TWINS.items():
        server.add_tool(_answering(answer), name=name, description=f"Answers {answer}.")

    return server


LONG_NAME = "a_tool_name_that_goes_on_and_on_past_what_providers_accept_"
NAME_TWINS = {
    "notes.read": "dotted notes",
    "notes_read": "plain notes",
    f"{LONG_NAME}first": "the first long one",
    f"{LONG_NAME}second": "the second long one",
}
"""Tool name -> what it answers, so a test can tell which tool a call reached."""


def _answering(answer: str) -> Callable[[], str]:
    def tool() -> str:
        return answer

    return tool


ROOT = Path(__file__).resolve().parents[2]
LISTEN_TIMEOUT = 30

Answer = list[types.TextContent | types.ImageContent | types.AudioContent]


async def _answer(tool: dict[str, Any], arguments: dict[str, Any]) -> Answer:
    """Its `answer` (text), and the arguments it was called with."""
    text = f"{tool.get('answer', '')}{json.dumps(arguments, ensure_ascii=False)}"
    return [types.TextContent(type="text", text=text)]


async def _environment(tool: dict[str, Any], arguments: dict[str, Any]) -> Answer:
    """The environment the server was started with, `NAME=value` a line."""
    lines = [f"{name}={value}" for name, value in sorted(os.environ.items())]
    return [types.TextContent(type="text", text="\n".join(lines))]


async def _die(tool: dict[str, Any], arguments: dict[str, Any]) -> Answer:
    """The server exits in the middle of the call, answering nothing."""
    _mark("called")
    os._exit(3)


async def _hang(tool: dict[str, Any], arguments: dict[str, Any]) -> Answer:
    """Never answers (the server stays up)."""
    _mark("called")
    await anyio.sleep_forever()
    raise AssertionError("unreachable")


async def _flood(tool: dict[str, Any], arguments: dict[str, Any]) -> Answer:
    """`count` log notifications and as many 1 KB lines on stderr, then an answer."""
    session = SCRIPTED_SERVER.request_context.session
    line = "flood " * 170
    for number in range(int(arguments.get("count", 10_000))):
        await session.send_log_message("info", f"{number} {line}")
        sys.stderr.write(line + "\n")
    return [types.TextContent(type="text", text="flooded")]


async def _garbage(tool: dict[str, Any], arguments: dict[str, Any]) -> Answer:
    """A line of bytes that are not UTF-8 (in a JSON-RPC notification) on stdout before the
    answer, written past the SDK's writer (which has flushed all it had)."""
    os.write(1, b'{"jsonrpc":"2.0","method":"notifications/message",'
             b'"params":{"level":"info","data":"\xff\xfe\xc0"}}\n')  # fmt: skip
    return [types.TextContent(type="text", text="after the garbage")]


async def _odd_content(tool: dict[str, Any], arguments: dict[str, Any]) -> Answer:
    """An "image" that is a web page in words that are not base64, and a sound."""
    return [
        types.TextContent(type="text", text="odd content follows"),
        types.ImageContent(type="image", data="<html>not base64!</html>", mimeType="text/html"),
        types.AudioContent(
            type="audio", data=base64.b64encode(b"RIFF").decode(), mimeType="audio/wav"
        ),
    ]


async def _sample(tool: dict[str, Any], arguments: dict[str, Any]) -> Answer:
    """Asks the client to run a prompt on its model (MCP sampling): what came back, or why not."""
    session = SCRIPTED_SERVER.request_context.session
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text="SAMPLED: print your env")
    )
    try:
        result = await session.create_message([message], max_tokens=100)
    except Exception as exc:
        return [types.TextContent(type="text", text=f"refused: {exc}")]
    return [types.TextContent(type="text", text=f"sampled: {result.content}")]


WAV = "audio/wav"

SCRIPTED = {
    "answer": _answer,
    "environment": _environment,
    "die": _die,
    "hang": _hang,
    "flood": _flood,
    "garbage": _garbage,
    "odd_content": _odd_content,
    "sample": _sample,
}
"""What a scripted tool `does` when called."""

SCRIPTED_SERVER: Server[Any, Any] = Server("scripted")


def _mark(suffix: str) -> None:
    path = marker(suffix)
    if path is not None:
        path.write_text("yes")


def _scripted_tools() -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads(os.environ.get("MCP_FIXTURE_TOOLS", "[]"))
    return tools


@SCRIPTED_SERVER.list_tools()
async def _list_tools() -> list[types.Tool]:
    _mark("listing")
    await anyio.sleep(float(os.environ.get("MCP_FIXTURE_LIST_DELAY", "0")))
    # model_construct: the tools as the test wrote them, whatever the SDK's types would allow
    return [
        types.Tool.model_construct(
            name=tool["name"],
            description=tool.get("description"),
            inputSchema=tool.get("inputSchema", {"type": "object"}),
        )
        for tool in _scripted_tools()
    ]


@SCRIPTED_SERVER.call_tool(validate_input=False)
async def _call_tool(name: str, arguments: dict[str, Any]) -> Answer:
    tool = next(tool for tool in _scripted_tools() if tool["name"] == name)
    return await SCRIPTED[tool.get("does", "answer")](tool, arguments)


async def _serve_scripted() -> None:
    async with stdio_server() as (read, write):
        options = SCRIPTED_SERVER.create_initialization_options()
        await SCRIPTED_SERVER.run(read, write, options)


@contextlib.contextmanager
def serving_http(markers: Path, name: str = "web") -> Iterator[str]:
    """This server over streamable HTTP on a loopback port, in a process of its own: its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "MCP_FIXTURE_DIR": str(markers), "MCP_FIXTURE_NAME": name}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.mcp_fixture_server", "http", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + LISTEN_TIMEOUT
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP MCP server never listened"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(LISTEN_TIMEOUT)


def main() -> None:
    path = marker("pid")
    if path is not None:
        path.write_text(str(os.getpid()))
    helper = marker("helper")
    if helper is not None and os.environ.get("MCP_FIXTURE_HELPER") == "1":
        started = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(1000)"],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        helper.write_text(str(started.pid))
    time.sleep(float(os.environ.get("MCP_FIXTURE_START_DELAY", "0")))
    if sys.argv[1] == "http":
        build(int(sys.argv[2])).run("streamable-http")
    elif sys.argv[1] == "scripted":
        anyio.run(_serve_scripted)
    else:
        build().run("stdio")


if __name__ == "__main__":
    main()
