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
ANCHOR = PIECE // 2
STRIDE = PIECE - ANCHOR + 1
"""Anchors ANCHOR long every STRIDE characters: any PIECE-long piece holds one whole."""

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
    """Replace each stretch of `text` that is the secret, or `PIECE` or more of it, by MASK."""
    spans = sorted(_spans(text, secret))
    if not spans:
        return text
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


def _spans(text: str, secret: str) -> list[tuple[int, int]]:
    """Where `text` holds the secret or a long piece of it. Only the anchors (short pieces at a
    stride) are searched for, each found one grown both ways: every `PIECE`-long piece holds a
    whole anchor, and a few searches cost far less than one per offset of the secret."""
    if len(secret) <= PIECE:
        return [(at, at + len(secret)) for at in _find_all(text, secret)]
    spans = []
    grown: dict[int, int] = {}  # text offset of the secret's start -> end of the stretch grown
    for anchor in range(0, len(secret) - ANCHOR + 1, STRIDE):
        for at in _find_all(text, secret[anchor : anchor + ANCHOR]):
            if at < grown.get(at - anchor, -1):
                continue  # inside a stretch already grown along the same alignment
            begin, end, left, right = at, at + ANCHOR, anchor, anchor + ANCHOR
            while begin > 0 and left > 0 and text[begin - 1] == secret[left - 1]:
                begin, left = begin - 1, left - 1
            while end < len(text) and right < len(secret) and text[end] == secret[right]:
                end, right = end + 1, right + 1
            grown[at - anchor] = end
            if end - begin >= PIECE:
                spans.append((begin, end))
    return spans


def _find_all(text: str, part: str) -> list[int]:
    found, at = [], text.find(part)
    while at != -1:
        found.append(at)
        at = text.find(part, at + 1)
    return found


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
