"""The one place that knows di-code's secrets, and the one function that hides them.

Whoever holds a secret (the set-up for the chosen key and the base URL's password, a provider
for its key and auth headers) registers it once; everything that writes text out of the
process (stdout and stderr through `RedactingStream`, the session file, provider error
messages) passes it through `redact`. So a key cannot leak through a path nobody thought of:
`printenv OPENAI_API_KEY` in bash, a server echoing the key, an error naming the URL.

A secret is hidden wherever it appears, and so is any piece of it of `PIECE` characters or
more: an error body cut in the middle of a key, or a key split over two writes, leaves at most
a few characters. Values shorter than `MIN_SECRET` are not treated as secrets: hiding them
would mask ordinary words. Credentials written in a URL (`scheme://user:password@host`) are
hidden by their shape, whether registered or not.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from typing import Any, TextIO

MASK = "***"
MIN_SECRET = 4
PIECE = 12

_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/@:]*:)[^\s/@]+@")
_lock = threading.Lock()
_secrets: frozenset[str] = frozenset()


def register(*values: str | None) -> None:
    """Remember secrets (surrounding whitespace ignored); short or empty values are skipped."""
    global _secrets
    found = {value.strip() for value in values if value and len(value.strip()) >= MIN_SECRET}
    with _lock:
        _secrets = _secrets | found


def register_url(url: str | None) -> None:
    """Remember the password of a URL's `user:password@` part."""
    if url:
        from urllib.parse import urlsplit

        with contextlib.suppress(ValueError):  # not a URL at all: nothing to take
            register(urlsplit(url).password)


def forget_all() -> None:
    """Drop every secret (tests start each case from none)."""
    global _secrets
    with _lock:
        _secrets = frozenset()


def redact(text: str) -> str:
    """`text` with every known secret, every long piece of one and URL passwords as `***`."""
    if "://" in text:
        text = _URL_CREDENTIALS.sub(rf"\1{MASK}@", text)
    for secret in _secrets:
        if len(text) >= min(len(secret), PIECE):
            text = _hide(text, secret)
    return text


def _hide(text: str, secret: str) -> str:
    """Replace each stretch of `text` made of overlapping `PIECE`-long pieces of `secret`."""
    size = min(len(secret), PIECE)
    spans: list[tuple[int, int]] = []
    for start in range(len(secret) - size + 1):
        piece = secret[start : start + size]
        at = text.find(piece)
        while at != -1:
            spans.append((at, at + size))
            at = text.find(piece, at + 1)
    if not spans:
        return text
    spans.sort()
    merged = [list(spans[0])]
    for begin, stop in spans[1:]:
        if begin <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], stop)
        else:
            merged.append([begin, stop])
    out, end = [], 0
    for begin, stop in merged:
        out += [text[end:begin], MASK]
        end = stop
    out.append(text[end:])
    return "".join(out)


class RedactingStream:
    """A text stream that redacts whatever is written to it; everything else is delegated.

    It has no `buffer`, so libraries that prefer writing bytes (prompt_toolkit) write text
    through `write` here instead of around it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":
            raise AttributeError(name)
        return getattr(self._stream, name)


def redact_output() -> None:
    """Route `sys.stdout` and `sys.stderr` (and so every library, logging and tracebacks)
    through `redact`; calling it again changes nothing."""
    if not isinstance(sys.stdout, RedactingStream):
        sys.stdout = RedactingStream(sys.stdout)
    if not isinstance(sys.stderr, RedactingStream):
        sys.stderr = RedactingStream(sys.stderr)


def clip(text: str, limit: int) -> str:
    """The first `limit` characters of `text`, redacted before it is cut (a cut key would
    otherwise leave its first part behind, no longer matching the whole secret)."""
    return redact(text)[:limit]
