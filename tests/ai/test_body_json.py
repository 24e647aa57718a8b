"""Request bodies encoded once per new item: the same bytes as a plain encoding, always."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from di_code.ai.providers.body_json import BodyEncoder, same_json


def plain(body: dict[str, Any]) -> bytes:
    """What httpx's `json=` sends."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode()


def tool_result(n: int) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": f"call_{n}", "content": f"line {n}\n" * 200}


def test_a_growing_conversation_encodes_only_its_new_messages() -> None:
    encoder = BodyEncoder()
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read it ☃"}]
    for turn in range(5):
        body = {"model": "m", "messages": list(messages), "tools": tools, "stream": True}
        assert encoder.encode(body) == plain(body)
        assert encoder.encoded == 2  # first the user message and the tool, then the 2 new
        messages += [{"role": "assistant", "content": "", "n": turn}, tool_result(turn)]


def test_a_changed_or_moved_item_is_encoded_again() -> None:
    encoder = BodyEncoder()
    first = {"messages": [{"a": 1}, {"b": [1, 2]}, {"c": "x"}]}
    encoder.encode(first)
    changed = {"messages": [{"a": True}, {"b": [1.0, 2]}, {"c": "x"}, {"d": None}]}
    assert encoder.encode(changed) == plain(changed)
    assert encoder.encoded == 3  # True is not 1, 1.0 is not 1; {"c": "x"} kept; one new
    reordered = {"messages": [{"c": "x"}, {"a": True}]}
    assert encoder.encode(reordered) == plain(reordered)
    assert encoder.encoded == 2


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, -0.0, 1.0, 1.5])
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=10,
)
bodies = st.dictionaries(
    st.sampled_from(["model", "messages", "tools", "stream"]),
    json_values | st.lists(json_values, max_size=4),
)


@given(st.lists(bodies, min_size=1, max_size=5))
def test_every_body_is_byte_for_byte_the_plain_encoding(sequence: list[dict[str, Any]]) -> None:
    encoder = BodyEncoder()
    for body in sequence:
        assert encoder.encode(body) == plain(body)


@given(json_values, json_values)
def test_same_json_means_the_same_text(a: Any, b: Any) -> None:
    if same_json(a, b):
        assert json.dumps(a) == json.dumps(b)


def test_a_body_with_a_long_string_is_the_same_json_encoded_in_pieces() -> None:
    """Strings over PIECE are encoded a piece at a time (each piece one call of the C encoder,
    so a worker thread encoding them lets the event loop run between pieces): same bytes."""
    from di_code.ai.providers import body_json

    text = ('a "quoted" line\\ with é, ✓, \t and \x01\n' * 60000)[: body_json.PIECE * 2 + 7]
    assert len(text) == body_json.PIECE * 2 + 7
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
        "n": [1.5, None, True],
    }
    expected = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    assert BodyEncoder().encode(body) == expected
    assert body_json._encode(body) == expected
