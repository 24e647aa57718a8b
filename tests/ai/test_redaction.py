"""The one redaction: whole secrets, long pieces of them, and passwords in URLs."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from di_code.ai.providers.http import MAX_MESSAGE, service_message
from di_code.ai.redaction import (
    MASK,
    MIN_SECRET,
    PIECE,
    RedactingStream,
    clip,
    forget_all,
    redact,
    register,
    register_url,
)

KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345"


def no_piece_of(secret: str, text: str) -> bool:
    """True when no PIECE-long stretch of `secret` is in `text`."""
    return all(secret[i : i + PIECE] not in text for i in range(len(secret) - PIECE + 1))


def test_whole_keys_and_long_pieces_are_hidden() -> None:
    register(f" {KEY}\r\n")
    text = f"a {KEY} b {KEY[:20]} c {KEY[-15:]} d {KEY[: PIECE - 1]}"
    assert redact(text) == f"a {MASK} b {MASK} c {MASK} d {KEY[: PIECE - 1]}"


def test_short_values_are_not_secrets() -> None:
    register("abc", "", None, "  ")
    assert redact("abc def") == "abc def"


def test_url_passwords_are_hidden_by_shape_and_by_registration() -> None:
    assert redact("connect http://me:hunter2@host/v1 failed") == (
        f"connect http://me:{MASK}@host/v1 failed"
    )
    register_url("https://me:pa55word-long@proxy.example/v1")
    assert redact("the password pa55word-long was wrong") == f"the password {MASK} was wrong"


def test_an_error_body_echoing_the_key_across_the_cut_keeps_none_of_it() -> None:
    register(KEY)
    body = "x" * (MAX_MESSAGE - 20) + f" key {KEY} was refused"
    message = service_message(body)
    assert no_piece_of(KEY, message) and KEY[:8] not in message
    assert no_piece_of(KEY, clip("y" * 190 + KEY, 200))


def test_a_redacting_stream_hides_secrets_and_offers_no_byte_buffer() -> None:
    register(KEY)
    sink = io.StringIO()
    stream = RedactingStream(sink)
    assert stream.write(f"key={KEY}\n") == len(f"key={KEY}\n")
    assert sink.getvalue() == f"key={MASK}\n"
    assert not hasattr(stream, "buffer")


def covered_by_pieces(text: str, secret: str) -> str:
    """The plain definition: mask every character inside any PIECE-long piece of the secret
    (or the whole secret, when shorter), runs of masked characters as one MASK."""
    size = min(len(secret), PIECE)
    hidden = [False] * len(text)
    for start in range(len(secret) - size + 1):
        piece = secret[start : start + size]
        at = text.find(piece)
        while at != -1:
            hidden[at : at + size] = [True] * size
            at = text.find(piece, at + 1)
    out, i = [], 0
    while i < len(text):
        if hidden[i]:
            out.append(MASK)
            while i < len(text) and hidden[i]:
                i += 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


@settings(max_examples=200)
@given(
    secret=st.text(alphabet="ab-", min_size=MIN_SECRET, max_size=40),
    cuts=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40), st.text("ab- ", max_size=9))),
)
def test_redaction_hides_exactly_the_long_pieces(
    secret: str, cuts: list[tuple[int, int, str]]
) -> None:
    text = "".join(filler + secret[min(i, j) : max(i, j)] for i, j, filler in cuts)
    forget_all()
    register(secret)
    assert redact(text) == covered_by_pieces(text, secret)


def test_a_key_in_its_json_spelling_is_hidden() -> None:
    """A key with a quote or a non-ASCII letter, as a JSON line escapes it (issue 40.5)."""
    import json

    odd = 'pa"ss\\wörd-0123456789'
    register(odd)
    for ascii in (True, False):
        line = json.dumps({"said": f"it is {odd}."}, ensure_ascii=ascii)
        said = json.loads(redact(line))["said"]
        assert said.startswith(f"it is {MASK}") and no_piece_of(odd, said)


@settings(max_examples=200)
@given(
    before=st.text(max_size=30),
    after=st.text(max_size=30),
    cuts=st.lists(st.integers(min_value=0, max_value=120), max_size=12),
)
def test_a_key_streamed_in_pieces_is_never_shown(before: str, after: str, cuts: list[int]) -> None:
    """However a text holding the key is cut into deltas, what a StreamRedactor lets through,
    put together, is the text redacted whole (issue 40.5)."""
    from di_code.ai.redaction import StreamRedactor

    register(KEY)
    text = f"{before}{KEY}{after}"
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    redactor = StreamRedactor()
    shown = "".join(redactor.feed(text[a:b]) for a, b in itertools.pairwise(bounds))
    shown += redactor.end()
    assert shown == redact(text)
    assert no_piece_of(KEY, shown) and MASK in shown


def test_log_lines_and_their_tracebacks_are_redacted(tmp_path: Path) -> None:
    """`--log FILE` (issue 40.5): a record's message and its exception's text."""
    import logging

    from di_code.ai.log_file import RedactingFormatter

    register(KEY)
    handler = logging.FileHandler(tmp_path / "log", encoding="utf-8")
    handler.setFormatter(RedactingFormatter(logging.BASIC_FORMAT))
    logger = logging.getLogger("test-redaction")
    logger.addHandler(handler)
    try:
        try:
            raise ValueError(f"server said {KEY}")
        except ValueError:
            logger.exception("request with %s failed", KEY)
    finally:
        logger.removeHandler(handler)
        handler.close()
    written = (tmp_path / "log").read_text(encoding="utf-8")
    assert "request with *** failed" in written and "ValueError: server said ***" in written
    assert no_piece_of(KEY, written)


def test_a_request_body_keeps_only_the_secrets_it_is_sent_with() -> None:
    """Issue 40.6: after a switch of provider, another provider's key is not in the body; the
    request's own key (in its headers or URL) is left as the conversation has it."""
    from di_code.ai.redaction import foreign_secrets_hidden

    other = "sk-ant-the-other-providers-key"
    register(KEY, other)
    body = f'{{"text": "{KEY} and {other} at http://me:pw-in-text@host"}}'.encode()
    sent = foreign_secrets_hidden(body, ["https://api.example/v1", f"Bearer {KEY}"])
    assert sent.decode() == f'{{"text": "{KEY} and {MASK} at http://me:pw-in-text@host"}}'
    assert foreign_secrets_hidden(body, [f"Bearer {KEY}", other]) is body


# Cases found by mutation testing (scripts/mutation.sh, docs/mutation.md): each fails when a
# part of the redaction it names is changed.

LONG = "0123456789abcdefghij"
"""A 20-character secret whose characters differ: where a piece of it starts is unambiguous."""


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (LONG[8:], MASK),  # its last 12: found by the last anchor there is
        (LONG[3:15], MASK),  # exactly PIECE long
        (LONG[6:18], MASK),  # grown left from an anchor to the text's start
        (LONG[7:19] + LONG[6], MASK + LONG[6]),  # growing left stops at the text's start
        (LONG[-1] + LONG[:12], LONG[-1] + MASK),  # and at the secret's start
        (LONG[:11], LONG[:11]),  # one short of a piece
    ],
)
def test_each_piece_of_a_long_secret_is_hidden_exactly(text: str, shown: str) -> None:
    register(LONG)
    assert redact(text) == shown


def test_secrets_that_touch_are_one_mask() -> None:
    register("abcdefgh1234", "zyxwvuts9876")
    assert redact("<abcdefgh1234zyxwvuts9876>") == f"<{MASK}>"


def test_a_key_made_of_characters_json_escapes_is_hidden_in_each_spelling() -> None:
    """No stretch of it survives an escape, so only its escaped spellings can match: once, with
    `/` as `\\/` too, and twice (a JSON file shown in a JSON line)."""
    import json

    odd = 'a"b/c"d/e"f/g"h/'
    register(odd)
    once = json.dumps(odd)[1:-1]
    for spelling in (once, once.replace("/", "\\/"), json.dumps(once)[1:-1]):
        assert redact(f"<{spelling}>") == f"<{MASK}>", spelling


def test_a_url_that_does_not_parse_registers_nothing() -> None:
    register_url("http://user:pw-0123@[::1")  # an unclosed IPv6 address: urlsplit refuses it
    register_url(None)
    assert redact("pw-0123") == "pw-0123"


def test_a_stream_redactor_holds_back_only_what_may_start_a_secret() -> None:
    from di_code.ai.redaction import StreamRedactor

    register(KEY)
    redactor = StreamRedactor()
    assert redactor.feed("hello!") == "hello!"
    assert redactor.feed("say sk-") == "say "  # may be the start of the key
    assert redactor.end() == "sk-"
    assert redactor.end() == ""


def test_bytes_are_redacted_and_bytes_that_are_not_utf8_pass() -> None:
    from di_code.ai.redaction import redact_bytes

    assert redact_bytes(b"\xff plain") == b"\xff plain"  # nothing registered: as they are
    assert redact_bytes(b"\xff http://u:pw@host") == b"\xff http://u:***@host"
    register(KEY)
    assert redact_bytes(b"\xff" + KEY.encode() + b"\xfe") == b"\xff***\xfe"


def test_a_request_body_that_is_not_utf8_is_still_redacted() -> None:
    from di_code.ai.redaction import foreign_secrets_hidden

    register(KEY)
    assert foreign_secrets_hidden(b"\xff" + KEY.encode() + b"\xfe", []) == b"\xff***\xfe"


def test_a_url_holds_a_secret_percent_encoded_too() -> None:
    from urllib.parse import quote

    from di_code.ai.redaction import holds_secret

    register(KEY)
    assert holds_secret(f"https://x.example/?q={KEY[3:20]}")
    assert holds_secret("https://x.example/?q=" + "".join(f"%{ord(c):02x}" for c in KEY))
    assert not holds_secret(f"https://x.example/?q={quote(KEY[:11])}")


def test_a_redacting_stream_delegates_all_but_the_byte_buffer() -> None:
    wrapped = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    stream = RedactingStream(wrapped)  # type: ignore[arg-type]
    register(KEY)
    stream.writelines([f"a {KEY}\n", "b\n"])
    stream.flush()
    assert stream.encoding == "utf-8"
    assert not hasattr(stream, "buffer") and hasattr(wrapped, "buffer")
    assert wrapped.buffer.getvalue() == b"a ***\nb\n"  # type: ignore[attr-defined]


def test_output_is_routed_through_redaction_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from di_code.ai.redaction import redact_output

    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    redact_output()
    first = sys.stdout, sys.stderr
    redact_output()
    assert (sys.stdout, sys.stderr) == first
    register(KEY)
    print(KEY)
    print(KEY, file=sys.stderr)
    assert out.getvalue() == err.getvalue() == f"{MASK}\n"


def test_a_stream_after_only_short_values_were_registered_passes_its_text() -> None:
    from di_code.ai.redaction import StreamRedactor

    register("", "abc", None)  # none of them a secret: nothing known yet
    redactor = StreamRedactor()
    assert redactor.feed("plain text") + redactor.end() == "plain text"


def test_the_missing_byte_buffer_is_named_in_the_error() -> None:
    with pytest.raises(AttributeError, match="buffer"):
        RedactingStream(io.StringIO()).buffer  # noqa: B018
