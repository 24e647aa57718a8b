"""SSE decoding by the WHATWG rules, however the bytes are cut."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from di_code.ai.sse import MAX_LINE, ServerSentEvent, SSEDecoder, SSEError


def decode(*chunks: bytes) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    return events + decoder.close()


def test_fields_comments_and_multiline_data() -> None:
    stream = (
        b": a comment\n"
        b"event: greet\n"
        b"data: first\n"
        b"data:second\n"
        b"id: 7\n"
        b"retry: 3000\n"
        b"unknown: ignored\n"
        b"\n"
        b"data\n"
        b"\n"
    )
    assert decode(stream) == [
        ServerSentEvent("first\nsecond", "greet", "7", 3000),
        ServerSentEvent("", "message", "7", 3000),
    ]


def test_only_one_space_after_the_colon_is_removed() -> None:
    assert decode(b"data:  two spaces\n\n")[0].data == " two spaces"


def test_event_without_data_is_not_dispatched_and_its_type_is_reset() -> None:
    assert decode(b"event: lonely\n\ndata: x\n\n") == [ServerSentEvent("x")]


def test_id_with_nul_is_ignored_and_bad_retry_is_ignored() -> None:
    events = decode(b"id: 1\n\ndata: a\nid: bad\x00\nretry: 12x\n\n")
    assert events == [ServerSentEvent("a", "message", "1", None)]


def test_cr_lf_and_crlf_line_endings_and_a_leading_bom() -> None:
    stream = "\ufeffdata: a\r\rdata: b\n\ndata: c\r\n\r\n".encode()
    assert [e.data for e in decode(stream)] == ["a", "b", "c"]


def test_only_the_first_bom_is_dropped() -> None:
    assert decode("\ufeffdata: \ufeffx\n\n".encode())[0].data == "\ufeffx"


def test_crlf_split_across_reads_is_one_line_end() -> None:
    assert [e.data for e in decode(b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n")] == ["a", "b"]


def test_utf8_character_split_across_reads() -> None:
    encoded = "data: héllo €\n\n".encode()
    cut = encoded.index("€".encode()) + 1
    assert decode(encoded[:cut], encoded[cut:])[0].data == "héllo €"


def test_complete_lines_without_final_blank_line_are_dispatched_at_close() -> None:
    assert decode(b"data: [DONE]\n") == [ServerSentEvent("[DONE]")]


def test_a_partial_last_line_is_discarded() -> None:
    assert decode(b"data: a\n\ndata: trunc") == [ServerSentEvent("a")]


def test_feed_returns_events_as_soon_as_they_complete() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n") == []
    assert decoder.feed(b"\n") == [ServerSentEvent("a")]


SAMPLE = (
    '\ufeff: hi\r\nevent: e\ndata: α\rdata: β€\r\n\r\nid: 3\ndata: {"x": 1}\n\ndata: z\r\r'.encode()
)


@given(st.lists(st.integers(min_value=0, max_value=len(SAMPLE)), max_size=8))
def test_any_cuts_give_the_same_events(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(SAMPLE)]
    chunks = [SAMPLE[a:b] for a, b in itertools.pairwise(bounds)]
    assert decode(*chunks) == decode(SAMPLE)
    assert [e.data for e in decode(SAMPLE)] == ["α\nβ€", '{"x": 1}', "z"]


def test_a_long_line_in_many_pieces_is_one_line() -> None:
    decoder = SSEDecoder()
    piece = b"x" * 4096
    events = decoder.feed(b"data: ")
    for _ in range(256):
        events += decoder.feed(piece)
    events += decoder.feed(b"\r")
    events += decoder.feed(b"\n\n")
    assert events == [ServerSentEvent("x" * 4096 * 256)]


def test_a_line_over_the_cap_is_a_clear_error() -> None:
    decoder = SSEDecoder()
    piece = b"y" * (1024 * 1024)
    decoder.feed(b"data: ")
    with pytest.raises(SSEError, match="an event-stream line is longer than 16 MB"):
        for _ in range(MAX_LINE // len(piece) + 1):
            decoder.feed(piece)
