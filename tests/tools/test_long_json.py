"""StringCut: a JSON text fed in pieces of any size comes out valid, each string its own
start (rg's JSON for a match on a line of many megabytes)."""

from __future__ import annotations

import json
import random

import pytest

from di_code.tools.builtin.support.long_json import StringCut

LINE = 'é"\\\n\x01' * 3000 + "a" * 5000  # two-byte characters, escapes, control characters


@pytest.mark.parametrize("seed", range(20))
def test_every_string_is_cut_to_its_start_and_the_json_stays_valid(seed: int) -> None:
    message = {"type": "match", "data": {"lines": {"text": LINE}, "line_number": 7}}
    raw = json.dumps(message, ensure_ascii=False).encode()
    pieces, chooser, at = StringCut(100), random.Random(seed), 0
    while at < len(raw):
        step = chooser.randint(1, 50)
        pieces.feed(raw[at : at + step])
        at += step
    back = json.loads(pieces.text)
    text = back["data"]["lines"]["text"]
    assert back["type"] == "match" and back["data"]["line_number"] == 7
    assert LINE.startswith(text) and 0 < len(text.encode()) <= 100


def test_a_short_json_text_is_kept_whole() -> None:
    raw = b'{"a": "x\\"y", "b": [1, "\\u0001"]}'
    cut = StringCut(100)
    cut.feed(raw)
    assert cut.text == raw
