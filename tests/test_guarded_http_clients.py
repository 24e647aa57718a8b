"""The one place HTTP clients are made: every client di-code makes comes from
di_code.system.http_client, which imports the HTTP stack and loads the CA bundle once, on a
thread, never on the event loop (where Ctrl-C, Esc and every other task would wait). Read from
the code: a
module that builds an httpx client, a transport or a TLS context itself fails here; and run:
each client (discovery, the local server's limits, MCP over HTTP, fetch) is made against a
loopback server while every load of a CA bundle is watched, and one on the loop fails."""

from __future__ import annotations

import ast
import asyncio
import io
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import di_code
from di_code.ai.providers.limits import probe_server_limits
from di_code.config.discovery import Candidate, discover
from di_code.system.abort import AbortController
from di_code.tools.builtin.fetch import FetchTool
from di_code.tools.extensions.mcp import McpServer
from di_code.tools.extensions.mcp_config import McpServerConfig
from tests.support.llm_server import LLMServer
from tests.support.mcp_fixture_server import serving_http

PACKAGE = Path(di_code.__file__).parent
FACTORY = PACKAGE / "system" / "http_client.py"
MAKERS = {
    "AsyncClient",
    "Client",
    "AsyncHTTPTransport",
    "HTTPTransport",
    "create_ssl_context",
    "create_default_context",
    "SSLContext",
}
"""What builds a client, its transport or a TLS context (and so may load a CA bundle)."""
OTHER_WAYS = {"urlopen", "HTTPConnection", "HTTPSConnection"}
"""The standard library's own clients: each makes a connection and a TLS context of its own."""
HTTPX_HELPERS = {"get", "post", "put", "patch", "delete", "head", "options", "request", "stream"}
"""httpx's module-level requests (`httpx.get(...)`): each makes a client of its own."""


def makers_called(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            owner = getattr(getattr(func, "value", None), "id", None)
            if name in MAKERS | OTHER_WAYS:
                found.append(f"line {node.lineno}: {name}")
            elif owner == "httpx" and name in HTTPX_HELPERS:
                found.append(f"line {node.lineno}: httpx.{name}")
    return found


def test_only_the_factory_builds_an_http_client_or_a_tls_context() -> None:
    outside = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != FACTORY:
            found = makers_called(path.read_text(encoding="utf-8"))
            if found:
                outside[str(path.relative_to(PACKAGE))] = found
    assert outside == {}, "make HTTP clients with di_code.system.http_client"
    assert makers_called(FACTORY.read_text(encoding="utf-8"))


def test_the_checker_catches_a_planted_client() -> None:
    planted = """
import httpx, ssl
client = httpx.AsyncClient(timeout=1)
transport = httpx.AsyncHTTPTransport()
context = ssl.create_default_context()
reply = httpx.get("https://example.org")
with httpx.stream("GET", "https://example.org") as streamed:
    pass
urllib.request.urlopen("https://example.org")
http.client.HTTPSConnection("example.org")
response = client.get("https://example.org")  # a client's own method: fine
"""
    assert sorted(line.split(": ")[1] for line in makers_called(planted)) == [
        "AsyncClient",
        "AsyncHTTPTransport",
        "HTTPSConnection",
        "create_default_context",
        "httpx.get",
        "httpx.stream",
        "urlopen",
    ]


def on_a_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@pytest.fixture
def ca_loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Where each CA bundle load ran: "loop" or "off" (a thread without a running loop)."""
    seen: list[str] = []
    for method in ("load_verify_locations", "set_default_verify_paths", "load_default_certs"):
        original = getattr(ssl.SSLContext, method)

        def watched(self: ssl.SSLContext, *args: Any, _original: Any = original, **kw: Any) -> Any:
            seen.append("loop" if on_a_running_loop() else "off")
            return _original(self, *args, **kw)

        monkeypatch.setattr(ssl.SSLContext, method, watched)
    yield seen


async def test_discovery_loads_no_ca_bundle_on_the_loop(
    llm_server: LLMServer, ca_loads: list[str]
) -> None:
    found = await discover([Candidate("local", llm_server.openai_base_url)])
    assert found is not None and found.model_id == "test-model"
    assert "loop" not in ca_loads


async def test_the_limits_probe_loads_no_ca_bundle_on_the_loop(
    llm_server: LLMServer, ca_loads: list[str]
) -> None:
    llm_server.publish("/props", {"default_generation_settings": {"n_ctx": 2048}})
    limits = await probe_server_limits(llm_server.openai_base_url, "ca-factory-model")
    assert limits.context_window == 2048
    assert "loop" not in ca_loads


@pytest.fixture
def mcp_url(tmp_path: Path) -> Iterator[str]:
    """An MCP server over HTTP, started and stopped outside the test's loop."""
    with serving_http(tmp_path) as url:
        yield url


async def test_an_mcp_server_over_http_loads_no_ca_bundle_on_the_loop(
    mcp_url: str, ca_loads: list[str]
) -> None:
    server = McpServer(McpServerConfig("web", "test", url=mcp_url), io.StringIO())
    try:
        await server.start()
        assert server.state == "ready", server.error
        assert any(tool.name == "add" for tool in server.listed)
    finally:
        await server.stop()
    assert "loop" not in ca_loads


async def test_fetch_loads_no_ca_bundle_on_the_loop(
    llm_server: LLMServer, ca_loads: list[str]
) -> None:
    fetch = FetchTool(private_hosts=frozenset({"127.0.0.1"}))
    url = llm_server.openai_base_url + "/models"
    result = await fetch.execute("call-1", {"url": url}, AbortController().signal)
    assert not result.is_error and "test-model" in str(result.content)
    assert "loop" not in ca_loads
