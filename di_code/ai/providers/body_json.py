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
from typing import Any

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class BodyEncoder:
    """One per client: the last body's list items and their JSON."""

    def __init__(self) -> None:
        self._last: dict[str, list[tuple[Any, str]]] = {}
        self.encoded = 0
        """How many list items the last body needed encoded (the others were reused)."""

    def encode(self, body: dict[str, Any]) -> bytes:
        self.encoded = 0
        fields: list[str] = []
        kept: dict[str, list[tuple[Any, str]]] = {}
        for key, value in body.items():
            if isinstance(value, list):
                items = self._items(value, self._last.get(key, []))
                kept[key] = items
                text = "[" + ",".join(json_text for _, json_text in items) + "]"
            else:
                text = _encode(value)
            fields.append(_encode(key) + ":" + text)
        self._last = kept
        return ("{" + ",".join(fields) + "}").encode()

    def _items(self, values: list[Any], last: list[tuple[Any, str]]) -> list[tuple[Any, str]]:
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
