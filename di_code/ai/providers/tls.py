"""The process's one TLS context: the CA bundle, loaded once, off the event loop."""

from __future__ import annotations

import asyncio
import functools
import ssl
import threading

from di_code.system.first_use import HTTP_STACK, import_here

_TLS_LOCK = threading.Lock()


def ssl_context() -> ssl.SSLContext:
    """The process's one TLS context; a caller waits for a load already under way."""
    with _TLS_LOCK:
        return _load_ssl_context()


async def loaded_ssl_context() -> ssl.SSLContext:
    """ssl_context for async code: the load (or the wait for one under way) on a thread."""
    return await asyncio.to_thread(ssl_context)


@functools.cache
def _load_ssl_context() -> ssl.SSLContext:
    """Loading the CA bundle costs ~0.1 s: do it once per process, not once per client."""
    import httpx

    return httpx.create_ssl_context()


def preload_tls() -> None:
    """Start importing the HTTP stack and loading the CA bundle on a helper thread, to
    overlap the rest of the start-up (the load is C code that releases the GIL, so on a
    second core it costs the first request nothing)."""

    def load() -> None:
        import_here(HTTP_STACK)
        ssl_context()

    threading.Thread(target=load, name="di-code-tls", daemon=True).start()
