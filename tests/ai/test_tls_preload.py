"""`preload_tls`: the CA bundle loads once, on a helper thread, and the request waits for it."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from di_code.ai.providers import http, tls


@pytest.fixture
def fresh_tls_cache() -> Iterator[None]:
    tls._load_ssl_context.cache_clear()
    yield
    tls._load_ssl_context.cache_clear()


def test_a_request_waits_for_the_load_under_way(
    monkeypatch: pytest.MonkeyPatch, fresh_tls_cache: None
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
    tls.preload_tls()
    assert loading.wait(10), "the helper thread did not start loading"
    got: list[ssl.SSLContext] = []
    request = threading.Thread(target=lambda: got.append(tls.ssl_context()))
    request.start()
    release.set()
    request.join(10)
    assert got == [loaded]
    assert loaders == ["di-code-tls"]  # loaded once, by the helper
    assert tls.ssl_context() is loaded


def test_without_preload_the_first_request_loads_it(fresh_tls_cache: None) -> None:
    context = tls.ssl_context()
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert tls.ssl_context() is context


async def test_a_plain_http_client_loads_no_ca_bundle_and_is_never_used_for_https(
    fresh_tls_cache: None,
) -> None:
    client = http.HttpClient(retry=http.RetryPolicy(), timeouts=http.Timeouts(stall=5.0))
    try:
        plain = await client._get("http://127.0.0.1:1/v1/chat/completions")
        assert await client._get("http://127.0.0.1:2/v1") is plain
        assert tls._load_ssl_context.cache_info().currsize == 0
        secure = await client._get("https://example.invalid/v1")
        assert secure is not plain and plain.is_closed
        assert tls._load_ssl_context.cache_info().currsize == 1
        assert await client._get("http://127.0.0.1:1/v1") is secure  # TLS serves both
    finally:
        await client.aclose()
