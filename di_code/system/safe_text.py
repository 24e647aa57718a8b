"""One sanitizer for every untrusted string that reaches the terminal.

Model text, tool arguments, tool output, file names and server error bodies come from outside;
a control character among them could move the cursor, erase the line a question is on, set the
window title (OSC 0) or the clipboard (OSC 52). `visible()` keeps newlines and tabs and shows
every other control character as a visible glyph instead, so what the user reads is what is
there. Characters that take no room (zero-width spaces and joiners, bidirectional overrides and
marks, Unicode tags, the other "format" characters) are shown as `<U+200B>` markers, so code
cannot read differently from how it runs ("trojan source") and no text hides in a line. The one
exception is a zero-width joiner between two emoji, which only draws them as one.
"""

from __future__ import annotations

import re

_C0_PICTURES = {code: chr(0x2400 + code) for code in range(0x20) if code not in (0x09, 0x0A)}
_GLYPHS: dict[str, str] = {
    **{chr(code): glyph for code, glyph in _C0_PICTURES.items()},
    "\x7f": "␡",
    **{chr(code): f"\\x{code:02x}" for code in range(0x80, 0xA0)},
}
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164"
    "\ufe00-\ufe0e\ufeff\uffa0\ufff9-\ufffb\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
"""Characters a terminal draws as nothing or that reorder what is drawn: every Unicode format
character (category Cf: zero-width, bidi, tags), the line and paragraph separators, the
fillers that look like a space of no width, the Khmer inherent vowels drawn as nothing, and
variation selectors (Mongolian ones too) other than the emoji one."""
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")
_ZWJ = "\u200d"


def visible(text: str) -> str:
    """`text` with every control character but newline and tab shown as a visible glyph
    (ESC as `␛`, CR as `␍`, C1 controls as `\\x9b`) and every invisible one as `<U+200B>`."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_shown, text)


def visible_line(text: str) -> str:
    """`visible(text)` with a newline shown too (`␊`): text that must stay one line, as a
    cloned project's file name in a warning, where a line break would start a line of the
    project's choosing."""
    return visible(text).replace("\n", "␊")


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    glyph = _GLYPHS.get(char)
    if glyph is not None:
        return glyph
    if char == _ZWJ and _joins_emoji(match.string, match.start()):
        return char
    return f"<U+{ord(char):04X}>"


def _joins_emoji(text: str, at: int) -> bool:
    """Whether the joiner at `at` stands between two emoji (a family, a profession)."""
    return 0 < at < len(text) - 1 and _emoji(text[at - 1]) and _emoji(text[at + 1])


def _emoji(char: str) -> bool:
    code = ord(char)
    return 0x1F000 <= code <= 0x1FAFF or 0x2600 <= code <= 0x27BF or code == 0xFE0F


def json_escaped(text: str) -> str:
    """JSON text with every character `visible` would mark written as a `\\u` escape: the
    same data, safe to show on a terminal (JSON escapes C0 itself, not C1 or the invisible)."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
