"""The fetch tool: GET a web page and hand the model its text, HTML turned into Markdown.

It sends data out (the URL itself can carry what the model read), so it asks in ask mode like
bash, and an allow or deny rule may name a host (`fetch:docs.python.org` covers that host and
its subdomains). What it refuses on its own:

- private, loopback and link-local addresses (a model must not probe the user's network or a
  local service), unless an allow rule names that host (`fetch:127.0.0.1`). The host is
  resolved once, checked, and connected to at that address (the TLS name stays the host's),
  so a DNS answer cannot change between the check and the connection;
- redirects to another host: the model is told where it leads and fetches that URL itself,
  which the permission rules then judge; redirects on the same host are followed (5 at most);
- binary content, by its type or a NUL character anywhere in its text (`web_text`: in the text,
  not the bytes, since UTF-16 text is full of NUL bytes); more than FETCH_MAX_BYTES (the rest
  is never read, and a compressed body is inflated only that far: `web_body`) or 30 s in all.

HTML becomes Markdown with html-to-markdown (compiled, so a large page converts far sooner than
with markdownify; made by `web_text`, off the event loop); text, Markdown and JSON are kept as they
are. Connections go directly, not
through the environment's proxy, since the address they reach is the one that was checked.
"""

from __future__ import annotations

import asyncio
import ipaddress
import zlib
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urljoin

from di_code.agent.tool import ToolOutput, ToolResult, ToolUpdate
from di_code.ai.redaction import holds_secret
from di_code.system.abort import AbortSignal
from di_code.system.http_client import http_client
from di_code.system.web_address import BadAddress, Resolver, WebAddress, resolve, web_address
from di_code.tools.builtin.cards import FETCH, FETCH_MAX_BYTES
from di_code.tools.builtin.support import web_body
from di_code.tools.builtin.support.web_text import Page, page_result
from di_code.tools.common.base import CheckedTool
from di_code.tools.common.errors import ToolError

TIMEOUT_S = 30.0
MAX_REDIRECTS = 5
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml")
TEXT_SUFFIXES = ("+json", "+xml")
USER_AGENT = "di-code (fetch tool; +https://github.com)"


@dataclass(frozen=True, slots=True)
class FetchTool(CheckedTool):
    private_hosts: frozenset[str] = field(default_factory=frozenset)
    """Hosts an allow rule names (normalised): they may be private or local addresses."""
    resolver: Resolver | None = None
    """Resolves a normalised host; None: the system's resolver."""
    name: ClassVar[str] = FETCH.name
    description: ClassVar[str] = FETCH.description
    parameters: ClassVar[dict[str, Any]] = FETCH.parameters

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        fetching = asyncio.ensure_future(self._fetch(params["url"]))
        aborted = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait({fetching, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
        if not fetching.done():
            fetching.cancel()
            raise ToolError("Fetch aborted")
        return fetching.result()

    async def _fetch(self, url: str) -> ToolResult:
        """The page as text; made in a worker thread (seconds for a large page), which a stop
        leaves behind."""
        page = await fetch_page(url, self.private_hosts, self.resolver)
        return await asyncio.to_thread(page_result, page)


async def fetch_page(
    url: str, private_hosts: frozenset[str], resolver: Resolver | None = None
) -> Page:
    client = await http_client(trust_env=False, timeout=TIMEOUT_S)
    import httpx  # imported by http_client, off the loop

    try:
        async with asyncio.timeout(TIMEOUT_S), client:
            for _ in range(MAX_REDIRECTS + 1):
                page_or_next = await _get(client, _address(url), private_hosts, resolver)
                if isinstance(page_or_next, Page):
                    return page_or_next
                url = page_or_next
    except TimeoutError:
        raise ToolError(f"Fetch timed out after {TIMEOUT_S:g} s: {url}") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"Fetch failed: {url}: {exc or type(exc).__name__}") from None
    raise ToolError(f"Too many redirects (more than {MAX_REDIRECTS}) from {url}")


def _address(url: str) -> WebAddress:
    """The address of `url`, each one fetched (redirects too); a URL that holds a key is not
    fetched at all: a key goes only to its provider (di_code.ai.redaction)."""
    if holds_secret(url):
        raise ToolError(
            "Not fetched: the URL holds a key di-code holds (a key goes only to its provider)"
        )
    try:
        return web_address(url)
    except BadAddress as exc:
        raise ToolError(str(exc)) from None


async def _get(
    client: Any, address: WebAddress, private_hosts: frozenset[str], resolver: Resolver | None
) -> Page | str:
    """The page at `address`, or the same-host URL a redirect leads to."""
    import httpx

    url = address.url
    ip = await _checked_address(address, private_hosts, resolver)
    request = client.build_request(
        "GET",
        httpx.URL(url).copy_with(host=ip),
        headers={
            "Host": address.host_header,
            "User-Agent": USER_AGENT,
            "Accept-Encoding": web_body.ACCEPTED,
        },
        extensions={"sni_hostname": address.host},
    )
    response = await client.send(request, stream=True)
    try:
        if response.is_redirect:
            return _same_host(address, response.headers.get("location", ""))
        content_type = response.headers.get("content-type", "")
        if not _is_text_type(content_type):
            raise ToolError(f"Not fetched: {url} is {content_type} (binary content is refused)")
        body, cut = await _read_capped(response, url)
        return Page(url, response.status_code, content_type, body, cut)
    finally:
        await response.aclose()


async def _checked_address(
    address: WebAddress, private_hosts: frozenset[str], resolver: Resolver | None
) -> str:
    host = address.host
    try:
        found = await resolve(address, resolver)
    except OSError as exc:
        raise ToolError(f"Cannot resolve {host}: {exc}") from None
    addresses = [ipaddress.ip_address(entry.split("%")[0]) for entry in found]
    if not addresses:
        raise ToolError(f"Cannot resolve {host}: no address")
    local = [ip for ip in addresses if not ip.is_global]
    if local and host not in private_hosts:
        raise ToolError(
            f"Not fetched: {host} is a private or local address ({local[0]}); "
            f'an allow rule "fetch:{host}" lets it through'
        )
    return str(addresses[0])


def _same_host(address: WebAddress, location: str) -> str:
    if not location:
        raise ToolError(f"{address.url} redirects without saying where")
    following = urljoin(address.url, location)
    if _address(following).host != address.host:
        raise ToolError(
            f"{address.url} redirects to another host: {following} (fetch that URL to follow it)"
        )
    return following


def _is_text_type(content_type: str) -> bool:
    kind = content_type.split(";")[0].strip().lower()
    return not kind or kind.startswith(TEXT_TYPES) or kind.endswith(TEXT_SUFFIXES)


async def _read_capped(response: Any, url: str) -> tuple[bytes, bool]:
    """At most FETCH_MAX_BYTES of the body, its codings undone within that bound (`web_body`:
    never httpx's own inflating); the rest is never read (the connection is closed)."""
    coding = response.headers.get("content-encoding", "")
    try:
        inflating = web_body.Inflating(coding, 2 * FETCH_MAX_BYTES)
    except web_body.UnknownCoding as exc:
        message = f"Not fetched: {url} is compressed as {exc} (fetch reads gzip and deflate)"
        raise ToolError(message) from None
    body = bytearray()
    async for chunk in response.aiter_raw():
        try:
            body += inflating.feed(chunk)
        except zlib.error as exc:
            raise ToolError(f"Fetch failed: {url}: its body is not {coding}: {exc}") from None
        if len(body) > FETCH_MAX_BYTES or inflating.full:
            return bytes(body[:FETCH_MAX_BYTES]), True
    return bytes(body), False
