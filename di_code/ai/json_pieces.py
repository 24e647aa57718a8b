"""JSON text of values that may hold a very long string (a 100 MB prompt), made in pieces.

One call of the C encoder holds the GIL throughout: encoding a 100 MB string is one call of
seconds, and a worker thread doing it would stop the event loop all the same. Here a string
longer than PIECE is encoded a piece at a time, each its own call, so another thread runs in
between. Each character is escaped on its own, so the pieces of a string escape to the pieces
of its escape: the text is the encoder's own, whole."""

from __future__ import annotations

import json
from typing import Any

PIECE = 1 << 20


def holds_long(value: Any) -> bool:
    """Whether `value` holds a string longer than PIECE (anywhere inside)."""
    if isinstance(value, str):
        return len(value) > PIECE
    if isinstance(value, dict):
        return any(map(holds_long, value.values()))
    if isinstance(value, list | tuple):
        return any(map(holds_long, value))
    return False


def text_pieces(value: Any, encoder: json.JSONEncoder) -> list[str]:
    """`encoder.encode(value)` as a list of pieces that join to it."""
    parts: list[str] = []
    _add(value, encoder, parts)
    return parts


def utf8(text: str) -> bytes:
    """`text.encode()`, a piece at a time (one call on 100 MB takes up to seconds)."""
    if len(text) <= PIECE:
        return text.encode()
    return b"".join(text[at : at + PIECE].encode() for at in range(0, len(text), PIECE))


def _add(value: Any, encoder: json.JSONEncoder, parts: list[str]) -> None:
    if isinstance(value, str) and len(value) > PIECE:
        parts.append('"')
        parts += (
            encoder.encode(value[at : at + PIECE])[1:-1] for at in range(0, len(value), PIECE)
        )
        parts.append('"')
    elif isinstance(value, dict) and holds_long(value):
        for index, (key, item) in enumerate(value.items()):
            parts += ("," if index else "{", encoder.encode(key), ":")
            _add(item, encoder, parts)
        parts.append("}" if value else "{}")
    elif isinstance(value, list | tuple) and holds_long(value):
        for index, item in enumerate(value):
            parts.append("," if index else "[")
            _add(item, encoder, parts)
        parts.append("]" if value else "[]")
    else:
        parts.append(encoder.encode(value))
