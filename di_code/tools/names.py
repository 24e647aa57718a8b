"""File names made into text that the model, the terminal and the session file can all take."""

from __future__ import annotations

import os


def escape_name(name: str) -> str:
    """A name or path as os functions give it, with each byte that is not UTF-8 (a lone
    surrogate there, PEP 383) written `\\xNN`: `caf\\xe9.txt`. Left as it is, such a name
    cannot be encoded, and the session file, the JSON output and the next request would fail."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")
