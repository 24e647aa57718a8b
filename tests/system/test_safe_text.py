"""The terminal sanitizer: nothing from outside can drive the terminal."""

from hypothesis import given
from hypothesis import strategies as st

from di_code.system.safe_text import visible


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


def test_zero_width_and_bidi_characters_are_marked() -> None:
    assert visible("rm\u200b -rf") == "rm<U+200B> -rf"
    assert visible("a\u200cb\u2060c\ufeffd") == "a<U+200C>b<U+2060>c<U+FEFF>d"
    assert visible("x\u200fy\u2067z") == "x<U+200F>y<U+2067>z"
    assert visible("tag\U000e0041") == "tag<U+E0041>"
    assert visible("a\u2028b") == "a<U+2028>b"


def test_a_joiner_between_emoji_draws_them_as_one() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert visible(family) == family
    assert visible("ls\u200d-la") == "ls<U+200D>-la"


def test_every_format_character_is_marked() -> None:
    import unicodedata

    format_chars = [
        chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) == "Cf"
    ]
    assert format_chars
    for char in format_chars:
        assert visible(f"a{char}b") == f"a<U+{ord(char):04X}>b", hex(ord(char))
