"""Every HTTP client di-code makes (the providers', discovery's, the local server limits probe's,
fetch's, an MCP server's over HTTP) comes from here, with the process's one TLS context.

Importing httpx with its HTTP/1.1 stack and loading the CA bundle each hold the interpreter for
a noticeable while; on the event loop that is a pause in which Ctrl-C, Esc and every other task
wait. So both happen once per process, on a thread: `warm_up_http` starts that at set-up, beside the
rest of it, and `http_client` makes each client on a thread too, waiting there for a warm-up
under way. A client whose URLs are all plain `http://` (a local model) needs no CA bundle: it
gets a TLS context that trusts no certificate, so an https URL given to it later fails rather
than connecting unverified. A CA file named by SSL_CERT_FILE that is not a regular file (a FIFO,
whose open would block that thread and every client after it for ever) is refused in one line.
tests/test_guarded_http_clients.py keeps every client made here.
"""

from __future__ import annotations

import contextlib
import os
import ssl
import stat
import threading
from typing import TYPE_CHECKING, Any

from di_code.system.first_use import import_here
from di_code.system.own_thread import on_own_thread

if TYPE_CHECKING:
    import httpx

HTTP_STACK = ("httpx", "httpcore._backends.anyio", "anyio._backends._asyncio")
"""What a first HTTP request imports: httpx, then, at its first connection, httpcore's anyio
backend and anyio's asyncio backend."""

_lock = threading.Lock()
_contexts: dict[bool, ssl.SSLContext] = {}
"""The TLS context for clients that verify certificates (True) and for plain-HTTP ones."""


def needs_tls(*urls: str) -> bool:
    """Whether a client for `urls` (none: any URL) may meet an https server."""
    return not urls or any(not url.lower().startswith("http://") for url in urls)


def tls_context(tls: bool) -> ssl.SSLContext:
    """The process's context of that kind, the HTTP stack imported with it; made once, on the
    calling thread, which must not be the loop's (a caller waits for one being made)."""
    with _lock:
        if tls not in _contexts:
            import_here(HTTP_STACK)
            import httpx

            if tls:
                _check_ca_file()
            made = httpx.create_ssl_context() if tls else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            _contexts[tls] = made
        return _contexts[tls]


def _check_ca_file() -> None:
    """OSError when SSL_CERT_FILE names something OpenSSL cannot read as a file of
    certificates without waiting (a missing file is left to OpenSSL's own error)."""
    path = os.environ.get("SSL_CERT_FILE")
    try:
        mode = os.stat(path).st_mode if path else stat.S_IFREG
    except OSError:
        return
    if not stat.S_ISREG(mode):
        raise OSError(f"SSL_CERT_FILE is not a regular file: {path}")


def warm_up_http(*urls: str) -> None:
    """Make what a client for `urls` needs on a helper thread, while the caller goes on
    (what fails there fails again, and is said, when a client is made)."""
    tls = needs_tls(*urls)

    def warm_up() -> None:
        with contextlib.suppress(Exception):
            tls_context(tls)

    threading.Thread(target=warm_up, name="di-code-http", daemon=True).start()


async def http_client(*urls: str, **options: Any) -> httpx.AsyncClient:
    """An `httpx.AsyncClient(**options)` for `urls` (none: any URL), made off the loop."""
    tls = needs_tls(*urls)

    def make() -> httpx.AsyncClient:
        context = tls_context(tls)
        import httpx

        return httpx.AsyncClient(verify=context, **options)

    return await on_own_thread(make)
