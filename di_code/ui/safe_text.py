"""One sanitizer for every untrusted string that reaches the terminal.

Model text, tool arguments, tool output, file names and server error bodies come from outside;
a control character among them could move the cursor, erase the line a question is on, set the
window title (OSC 0) or the clipboard (OSC 52). `visible()` keeps newlines and tabs and shows
every other control character as a visible glyph instead, so what the user reads is what is
there. Bidirectional overrides are shown as `<U+202E>` so code cannot read differently from
how it runs ("trojan source").
"""

from __future__ import annotations

import re

_C0_PICTURES = {code: chr(0x2400 + code) for code in range(0x20) if code not in (0x09, 0x0A)}
_TABLE: dict[int, str] = {
    **_C0_PICTURES,
    0x7F: "␡",
    **{code: f"\\x{code:02x}" for code in range(0x80, 0xA0)},
    **{code: f"<U+{code:04X}>" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))},
}
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with every control character but newline and tab shown as a visible glyph
    (ESC as `␛`, CR as `␍`, C1 controls as `\\x9b`)."""
    if _UNSAFE.search(text) is None:
        return text
    return text.translate(_TABLE)
