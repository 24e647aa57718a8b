"""File names made into text that the model, the terminal and the session file can all take."""

from __future__ import annotations

import os
import re

_ESCAPED_BYTE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")


def escape_name(name: str) -> str:
    """A name or path as os functions give it, with each byte that is not UTF-8 (a lone
    surrogate there, PEP 383) written `\\xNN`: `caf\\xe9.txt`. Left as it is, such a name
    cannot be encoded, and the session file, the JSON output and the next request would fail."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def unescaped_path(path: str) -> str:
    """The path a model gives back as `escape_name` showed it: when `path` names nothing but
    the one with its `\\xNN` turned back into those bytes does, that one; else `path` (a file
    really named with a backslash is found by its own name first)."""
    if "\\x" not in path or os.path.lexists(path):
        return path
    raw = _ESCAPED_BYTE.sub(lambda byte: chr(0xDC00 + int(byte.group(1), 16)), path)
    return raw if os.path.lexists(raw) else path
