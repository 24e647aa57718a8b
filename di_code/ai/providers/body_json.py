"""Request bodies as JSON, without encoding the same conversation again on every request.

A tool loop sends the whole conversation with each request, and each request's conversation is
the previous one plus a few messages: encoding all of it every time made each turn cost more
than the one before. `BodyEncoder` remembers, for each top-level list of the last body (the
messages, the tools), every item with its JSON; an item of the next body that is strictly the
same as the one at its place last time reuses that JSON, so only new items are encoded.
"Strictly the same" is what gives the same text: same types (`1`, `1.0` and `true` are equal in
Python, not in JSON), same key order, same float text. Large strings compare by identity
first, so checking an unchanged item costs little however long its text is.
The output is what httpx's `json=` sends: compact separators, UTF-8, NaN refused.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator
from typing import Any

from di_code.ai.json_pieces import PIECE, holds_long, text_pieces, utf8

_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _encode(value: Any) -> bytes:
    if not holds_long(value):
        return _json.encode(value).encode()
    return b"".join(utf8(piece) for piece in text_pieces(value, _json))


def sendable(content: bytes) -> bytes | AsyncIterator[bytes]:
    """The body as httpx is to send it: over PIECE (json_pieces), a piece at a time (the
    caller sets its Content-Length). One write of 100 MB held the event loop for seconds:
    asyncio (3.11) copies it into its buffer, then moves what is left to the front after every
    send."""
    if len(content) <= PIECE:
        return content

    async def pieces() -> AsyncIterator[bytes]:
        for start in range(0, len(content), PIECE):
            yield content[start : start + PIECE]

    return pieces()


class BodyEncoder:
    """One per client: the last body's list items and their JSON (UTF-8, joined once)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        """Bodies are encoded on worker threads (providers/http): one at a time."""
        self._last: dict[str, list[tuple[Any, bytes]]] = {}
        self.encoded = 0
        """How many list items the last body needed encoded (the others were reused)."""

    def encode(self, body: dict[str, Any]) -> bytes:
        """The body's JSON, joined once: every copy of a large body costs a fresh allocation."""
        with self._lock:
            return self._encode_body(body)

    def _encode_body(self, body: dict[str, Any]) -> bytes:
        self.encoded = 0
        parts: list[bytes] = []
        kept: dict[str, list[tuple[Any, bytes]]] = {}
        for key, value in body.items():
            parts += (b"," if parts else b"{", _encode(key), b":")
            if not isinstance(value, list):
                parts.append(_encode(value))
                continue
            items = kept[key] = self._items(value, self._last.get(key, []))
            parts.append(b"[")
            for index, (_, text) in enumerate(items):
                parts += (b",", text) if index else (text,)
            parts.append(b"]")
        self._last = kept
        parts.append(b"}" if parts else b"{}")
        return b"".join(parts)

    def _items(self, values: list[Any], last: list[tuple[Any, bytes]]) -> list[tuple[Any, bytes]]:
        items = []
        for index, value in enumerate(values):
            if index < len(last) and same_json(value, last[index][0]):
                items.append((value, last[index][1]))
            else:
                items.append((value, _encode(value)))
                self.encoded += 1
        return items


def same_json(a: Any, b: Any) -> bool:
    """Whether `a` and `b` encode to the same JSON text."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        return len(a) == len(b) and all(
            same_json(key_a, key_b) and same_json(value_a, value_b)
            for (key_a, value_a), (key_b, value_b) in zip(a.items(), b.items(), strict=True)
        )
    if kind is list or kind is tuple:
        return len(a) == len(b) and all(map(same_json, a, b))
    if kind is float:
        return repr(a) == repr(b)
    return bool(a == b)
