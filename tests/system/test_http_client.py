"""The HTTP clients' factory: the CA bundle loads once, on a helper thread, and a client waits for
it; a client for plain-HTTP servers loads none, and trusts no certificate."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from di_code.ai.providers import http
from di_code.system import http_client


@pytest.fixture
def fresh_contexts() -> Iterator[None]:
    http_client._contexts.clear()
    yield
    http_client._contexts.clear()


async def test_a_client_waits_for_the_warm_up_under_way(
    monkeypatch: pytest.MonkeyPatch, fresh_contexts: None
) -> None:
    loaded = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    loaders: list[str] = []
    loading, release = threading.Event(), threading.Event()

    def slow_load(*_args: Any, **_kwargs: Any) -> ssl.SSLContext:
        loaders.append(threading.current_thread().name)
        loading.set()
        release.wait(10)
        return loaded

    monkeypatch.setattr(httpx, "create_ssl_context", slow_load)
    http_client.warm_up_http("https://api.example.invalid/v1")
    assert loading.wait(10), "the helper thread did not start loading"
    release.set()
    async with await http_client.http_client("https://api.example.invalid/v1") as client:
        assert isinstance(client, httpx.AsyncClient)
    assert loaders == ["di-code-http"]  # loaded once, by the helper
    assert http_client.tls_context(True) is loaded


def test_without_a_warm_up_the_first_client_loads_it(fresh_contexts: None) -> None:
    context = http_client.tls_context(True)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.cert_store_stats()["x509_ca"] > 0
    assert http_client.tls_context(True) is context


def test_a_plain_http_client_trusts_no_certificate(fresh_contexts: None) -> None:
    """Given an https URL after all, it fails to verify rather than connecting unverified."""
    assert not http_client.needs_tls("http://127.0.0.1:8080/v1", "HTTP://localhost/v1")
    assert http_client.needs_tls("http://127.0.0.1/v1", "https://api.example.invalid")
    assert http_client.needs_tls()  # a client for any URL (fetch)
    plain = http_client.tls_context(False)
    assert plain.verify_mode == ssl.CERT_REQUIRED and plain.check_hostname
    assert plain.cert_store_stats()["x509_ca"] == 0
    assert True not in http_client._contexts  # no CA bundle was loaded for it


async def test_a_plain_http_provider_client_loads_no_ca_bundle_and_is_never_used_for_https(
    fresh_contexts: None,
) -> None:
    client = http.HttpClient(retry=http.RetryPolicy(), timeouts=http.Timeouts(stall=5.0))
    try:
        plain = await client._get("http://127.0.0.1:1/v1/chat/completions")
        assert await client._get("http://127.0.0.1:2/v1") is plain
        assert True not in http_client._contexts
        secure = await client._get("https://example.invalid/v1")
        assert secure is not plain and plain.is_closed
        assert True in http_client._contexts
        assert await client._get("http://127.0.0.1:1/v1") is secure  # TLS serves both
    finally:
        await client.aclose()
