"""Fast resume keeps every guarantee of the slow one: the whole-file parse equals line-by-line
parsing or gives way to it, bad values are warnings, and the branch is walked once."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from di_code.ai.types import AssistantMessage, TextContent, UserMessage
from di_code.session import Session, SessionError, SessionStore
from di_code.session.jsonl import parse_all, read_records

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=4,
)
encoded = json_values.map(lambda value: json.dumps(value, ensure_ascii=False).encode())
padding = st.sampled_from([b"", b" ", b"\t", b"\r", b" \r"])
good_lines = st.tuples(padding, encoded, padding).map(b"".join)


@st.composite
def broken_lines(draw: st.DrawFn) -> bytes:
    """A cut-off line, pieces of lines glued together, or stray brackets and commas."""
    pieces = draw(st.lists(encoded, min_size=1, max_size=3))
    text = b"".join(pieces)
    cut = draw(st.integers(0, len(text)))
    glue = draw(st.sampled_from([b"", b",", b"]", b"}", b"[", b"{", b"],[", b"},{", b'"']))
    return draw(st.sampled_from([text[:cut], text[:cut] + glue, glue + text[cut:], text]))


def loads_each(lines: list[bytes]) -> list[Any] | None:
    try:
        return [json.loads(line) for line in lines]
    except ValueError:
        return None


def same(one: Any, two: Any) -> bool:
    """Equal, with NaN equal to itself (json.dumps keeps NaN)."""
    return json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


@given(st.lists(good_lines, max_size=6))
def test_whole_file_parse_equals_line_by_line(lines: list[bytes]) -> None:
    values = parse_all(lines)
    assert values is not None
    assert same(values, [json.loads(line) for line in lines])


@settings(max_examples=150)
@given(st.lists(good_lines | broken_lines(), min_size=1, max_size=6))
def test_whole_file_parse_never_accepts_what_a_line_parse_rejects(lines: list[bytes]) -> None:
    values = parse_all(lines)
    expected = loads_each(lines)
    event(f"whole-file parse {'accepted' if values is not None else 'declined'}")
    event(f"every line {'is' if expected is not None else 'is not'} one value")
    if expected is None and loads_each([b"[" + b",".join(lines) + b"]"]) is not None:
        event("a plain join of the lines would have parsed")
    if values is not None:
        assert expected is not None
        assert same(values, expected)
    assert (values is None) == (expected is None)  # and it declines only what it must


@pytest.mark.parametrize(
    "lines",
    [
        [b"[[1", b"2]]", b"1],[2"],  # a plain join would parse as three values, misaligned
        [b"1,2", b"3"],
        [b'1}, {"z": 2', b"3"],
        [b'{"a": "b', b'c"}'],
        [b"\xef\xbb\xbf{}", b"{}"],  # a BOM: json.loads(bytes) takes it, the line path decides
        [b"[" * 100_000],
    ],
)
def test_lines_that_are_not_one_value_each_go_line_by_line(lines: list[bytes]) -> None:
    assert parse_all(lines) is None


def write_session(tmp_path: Path, count: int = 4) -> Session:
    session = SessionStore(tmp_path).create(tmp_path)
    for i in range(count):
        session.append_message(UserMessage.of(f"m{i}", i))
    return session


def replace_line(path: Path, number: int, line: str) -> None:
    text = path.read_text().splitlines()
    text[number - 1] = line
    path.write_text("\n".join(text) + "\n")


def test_a_line_nested_too_deeply_is_a_warning(tmp_path: Path) -> None:
    session = write_session(tmp_path)
    replace_line(session.path, 3, "[" * 100_000)
    loaded = Session.load(session.path)
    assert loaded.warnings == [
        f"{session.path.name}: line 3 is corrupt and was skipped (nested too deeply)"
    ]
    # m1 is gone; m2, whose parent it was, follows m0: the rest of the conversation stays
    texts = [m.content[0].text for m in loaded.context()]  # type: ignore[union-attr]
    assert texts == ["m0", "m2", "m3"]


@pytest.mark.parametrize(
    ("where", "value", "reason"),
    [
        (("timestamp",), float("inf"), "'timestamp' must be a finite number"),
        (("message", "timestamp"), float("nan"), "'timestamp' must be a finite number"),
        (("timestamp",), True, "'timestamp' must be a number"),
        (("message", "usage", "input"), float("-inf"), "'input' must be a finite number"),
        (("message", "usage", "cost", "total"), 10**400, "'total' is too large"),
    ],
)
def test_numbers_json_allows_but_di_code_cannot_use_are_warnings(
    tmp_path: Path, where: tuple[str, ...], value: Any, reason: str
) -> None:
    session = SessionStore(tmp_path).create(tmp_path)
    session.append_message(UserMessage.of("hi", 1))
    session.append_message(AssistantMessage([TextContent("yo")], "p", "m", timestamp=2))
    entry = json.loads(session.path.read_text().splitlines()[2])
    inner = entry
    for key in where[:-1]:
        inner = inner[key]
    inner[where[-1]] = value
    replace_line(session.path, 3, json.dumps(entry))
    loaded = Session.load(session.path)
    assert loaded.warnings == [f"{session.path.name}: line 3 was skipped ({reason})"]
    assert [m.role for m in loaded.context()] == ["user"]


def test_an_infinite_header_timestamp_is_a_session_error(tmp_path: Path) -> None:
    session = write_session(tmp_path)
    header = json.loads(session.path.read_text().splitlines()[0])
    replace_line(session.path, 1, json.dumps({**header, "timestamp": float("inf")}))
    with pytest.raises(SessionError, match="invalid timestamp"):
        Session.load(session.path)


def test_float_timestamps_still_load(tmp_path: Path) -> None:
    session = write_session(tmp_path, 1)
    replace_line(
        session.path,
        2,
        session.path.read_text().splitlines()[1].replace('"timestamp":0', '"timestamp":7.9'),
    )
    [message] = Session.load(session.path).context()
    assert message.timestamp == 7


def test_the_branch_is_walked_once_and_then_extended(tmp_path: Path) -> None:
    write_session(tmp_path)
    path = next(tmp_path.glob("sessions/*/*.jsonl"))
    with patch.object(Session, "branch_to", autospec=True, side_effect=Session.branch_to) as walk:
        loaded = Session.load(path)
        loaded.context()
        loaded.model()
        loaded.append_model_change("p", "m")
        loaded.append_message(UserMessage.of("more", 9))
        branch = loaded.branch()
    assert walk.call_count == 1
    assert [entry.id for entry in branch] == [entry.id for entry in Session.load(path).branch()]
    assert loaded.model() == ("p", "m") and loaded.context()[-1] == UserMessage.of("more", 9)


@pytest.mark.parametrize("enabled", [True, False])
def test_loading_leaves_the_collector_as_it_found_it(tmp_path: Path, enabled: bool) -> None:
    session = write_session(tmp_path)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json\n")
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        Session.load(session.path)
        with pytest.raises(SessionError):
            Session.load(broken)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_records_keep_their_line_numbers_around_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a":1}\n\n  \n[2]\n"tail"')
    records, warnings = read_records(path)
    assert [(r.line, r.data) for r in records] == [(1, {"a": 1}), (4, [2]), (5, "tail")]
    assert warnings == []
