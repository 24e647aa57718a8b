"""The one reader of a web address's host: parsed and normalised once, then matched, resolved and
connected to as that one name.

A rule that compares strings is passed by another spelling of the same host: `pastebin.com.`,
`PASTEBIN.com`, `pastebin。com` (U+3002) and its full-width form all reach pastebin.com, and a
resolver stops at a NUL, so `localhost\\0.example.org` is looked up as `localhost`. Here a host
becomes one canonical name: IDNA to ASCII with the UTS 46 mapping (what browsers do), lower
case, the trailing dot dropped; an IPv4 address in any form `inet_aton` reads (`127.1`,
`0x7f.0.0.1`, `2130706433`) becomes its dotted quad, an IPv6 address its short form. NUL,
control characters, spaces, `%` (an IPv6 zone's too) and any label that is not letters, digits
and inner `-` (at most 63 of them) make the URL invalid. The fetch tool's rules
(`fetch:HOST`), its private-address check and its resolver all take a `WebAddress`, which only
`web_address` makes.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit, urlunsplit

import msgspec

from di_code.system.errors import DiCodeError

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""(normalised host, port) -> the addresses it resolves to; `system_resolver` by default."""

_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_NUMERIC = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)")


class BadAddress(DiCodeError, ValueError):
    """A URL or host that cannot be fetched; the message is one line, for the model."""


class WebAddress(msgspec.Struct, frozen=True):
    """An http(s) URL whose host is normalised: `url` is what is fetched and shown."""

    scheme: str
    host: str
    port: int
    url: str

    @property
    def host_header(self) -> str:
        """The `Host` header: the normalised host, and the port when it is not the default."""
        name = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return name if self.port == default else f"{name}:{self.port}"


def web_address(url: str) -> WebAddress:
    """`url` with its host normalised; BadAddress when it is not an http(s) URL with a host
    that can be named."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise BadAddress(f"Invalid URL {url!r}: {exc}") from None
    if port == 0:
        raise BadAddress(f"Invalid URL {url!r}: port 0")
    if parts.scheme not in ("http", "https"):
        raise BadAddress(f"Only http:// and https:// URLs can be fetched, not {url!r}")
    userinfo, at, hostport = parts.netloc.rpartition("@")
    bracketed = hostport.startswith("[")
    raw = hostport[1 : hostport.find("]")] if bracketed else hostport.partition(":")[0]
    try:
        host = normal_host(raw)
    except BadAddress as exc:
        raise BadAddress(f"Invalid URL {url!r}: {exc}") from None
    address = WebAddress(parts.scheme, host, port or (443 if parts.scheme == "https" else 80), "")
    netloc = f"{userinfo}{at}{address.host_header}"
    rebuilt = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return WebAddress(address.scheme, host, address.port, rebuilt)


def normal_host(text: str) -> str:
    """A host's one canonical name (see the module); BadAddress when it has none."""
    if not text:
        raise BadAddress("no host")
    if any(ord(char) < 0x21 or 0x7F <= ord(char) < 0xA0 for char in text):
        raise BadAddress("a control character or space in the host")
    if "%" in text:  # an IPv6 zone (`::1%25lo`) too: the address without it is another name
        raise BadAddress("a % in the host")
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        pass
    import idna

    try:
        name = idna.encode(text, uts46=True, std3_rules=False, transitional=False).decode()
    except (idna.IDNAError, UnicodeError) as exc:
        raise BadAddress(f"not a valid host name ({exc})") from None
    name = name.lower().removesuffix(".")
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise BadAddress(f"not a valid host name: {name!r}")
    if _NUMERIC.fullmatch(labels[-1]):
        return _ipv4(name)
    return name


def _ipv4(name: str) -> str:
    """A host that ends in a number is an IPv4 address in one of the forms resolvers read."""
    import socket

    try:
        return socket.inet_ntoa(socket.inet_aton(name))
    except OSError:
        raise BadAddress(f"not a valid IPv4 address: {name!r}") from None


def rule_host(text: str) -> str | None:
    """A rule's host normalised as a URL's is; None when it cannot be (it names nothing)."""
    try:
        return normal_host(text)
    except BadAddress:
        return None


def host_matches(host: str, rule: str) -> bool:
    """Whether a rule's host names the normalised `host` or a domain above it."""
    wanted = rule_host(rule)
    return wanted is not None and (host == wanted or host.endswith(f".{wanted}"))


async def system_resolver(host: str, port: int) -> list[str]:
    """The system's resolver, off the event loop (asyncio runs getaddrinfo in a thread)."""
    import asyncio
    import socket

    found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(entry[4][0]) for entry in found]


async def resolve(address: WebAddress, resolver: Resolver | None = None) -> list[str]:
    """The addresses `address`'s normalised host resolves to (an IP address is itself)."""
    try:
        return [str(ipaddress.ip_address(address.host))]
    except ValueError:
        return await (resolver or system_resolver)(address.host, address.port)
