"""The terminal sanitizer: nothing from outside can drive the terminal."""

from hypothesis import given
from hypothesis import strategies as st

from di_code.ui.safe_text import visible


def test_escape_sequences_are_shown_not_sent() -> None:
    spoof = "rm -rf ~\x1b[2K\rAllow bash: git status?"
    shown = visible(spoof)
    assert "\x1b" not in shown and "\r" not in shown
    assert shown == "rm -rf ~␛[2K␍Allow bash: git status?"


def test_osc_title_clipboard_and_bell() -> None:
    shown = visible("\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07")
    assert shown == "␛]0;pwned␇␛]52;c;ZXZpbA==␇"


def test_c1_controls_and_bidi_overrides() -> None:
    assert visible("a\x9b2Jb") == "a\\x9b2Jb"
    assert visible("if x\u202e;") == "if x<U+202E>;"


def test_plain_text_newlines_and_tabs_pass_through() -> None:
    text = "def f():\n\treturn 'héllo ✓'\n"
    assert visible(text) is text


@given(st.text())
def test_no_control_character_survives(text: str) -> None:
    shown = visible(text)
    assert all(ch in "\n\t" or (ord(ch) >= 0x20 and not 0x7F <= ord(ch) <= 0x9F) for ch in shown)
    assert not any(0x202A <= ord(ch) <= 0x202E or 0x2066 <= ord(ch) <= 0x2069 for ch in shown)
