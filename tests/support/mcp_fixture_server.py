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
"""

from __future__ import annotations

import base64
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import anyio
from mcp.server.fastmcp import FastMCP, Image

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
    else:
        build().run("stdio")


if __name__ == "__main__":
    main()
