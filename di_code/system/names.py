"""File names made into text that the model, the terminal and the session file can all take."""

from __future__ import annotations

import os
import re

_ESCAPED_BYTE = re.compile(r"\\x([01][0-9a-fA-F]|7[fF]|[89a-fA-F][0-9a-fA-F])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_LINE_BREAKS = re.compile("[\x85\u2028\u2029]")
"""What Python's `splitlines()`, and many a reader, take as a line break besides CR and LF."""


def escape_name(name: str) -> str:
    """A name or path as os functions give it, with each byte that is not UTF-8 (a lone
    surrogate there, PEP 383) and each control character written `\\xNN`: `caf\\xe9.txt`,
    `a\\x0ab.txt`. Left as it is, the first cannot be encoded (the session file, the JSON output
    and the next request would fail), and a newline or a carriage return in a name would forge
    a line of a tool's output (a `path:line: error` of another file)."""
    text = os.fsencode(name).decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda char: f"\\x{ord(char.group()):02x}", text)


def one_line(text: str) -> str:
    """`escape_name(text)` with the other line breaks (NEL, U+2028, U+2029) written `\\u2028`
    too: a name in a line of text di-code writes for the model (a git branch in the prompt),
    which must not break that line into one the repository wrote."""
    return _LINE_BREAKS.sub(lambda char: f"\\u{ord(char.group()):04x}", escape_name(text))


def unescaped_path(path: str) -> str:
    """The path a model gives back as `escape_name` showed it: when `path` names nothing but
    the one with its `\\xNN` turned back into those bytes does, that one; else `path` (a file
    really named with a backslash is found by its own name first)."""
    if "\\x" not in path or os.path.lexists(path):
        return path
    raw = _ESCAPED_BYTE.sub(lambda byte: _unescaped(int(byte.group(1), 16)), path)
    return raw if os.path.lexists(raw) else path


def _unescaped(byte: int) -> str:
    """The character `escape_name` wrote as `\\xNN`: a control character as itself, a byte
    that is not UTF-8 as its lone surrogate (PEP 383)."""
    return chr(byte) if byte < 0x80 else chr(0xDC00 + byte)
