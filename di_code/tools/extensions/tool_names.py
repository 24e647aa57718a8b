"""Tool names every provider accepts, each given to one tool only.

The four wire APIs agree on `[A-Za-z0-9_-]` and at most 64 characters (OpenAI Chat Completions
and Responses, Anthropic Messages); Gemini adds that the first must be a letter or `_`. Tools
from outside (MCP servers) may use any name: one that does not fit is made to fit and then
ends in `_` and a hash of the original, so `notes.read` and `notes_read`, or two names alike
in their first 64 characters, stay two tools. The hash is of the original, not of an order, so
a tool keeps its name from one start to the next (a resumed session's calls still match).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Collection, Sequence

NAME_LIMIT = 64
PROVIDER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_HASH_DIGITS = 8


def distinct_names(wanted: Sequence[tuple[str, str]], taken: Collection[str] = ()) -> list[str]:
    """A provider name for each `(name, identity)`: `name` itself when providers accept it,
    nothing in `taken` has it and no other entry wants it; else `name` made to fit, with a
    suffix from `identity` (what tells the tool apart, e.g. its server and remote name)."""
    wanting = Counter(name for name, _ in wanted)
    given = set(taken)
    kept = [
        PROVIDER_NAME.fullmatch(name) is not None and wanting[name] == 1 and name not in given
        for name, _ in wanted
    ]
    given.update(name for (name, _), keep in zip(wanted, kept, strict=True) if keep)
    names: list[str] = []
    for (name, identity), keep in zip(wanted, kept, strict=True):
        if not keep:
            name = _suffixed(name, identity, given)
            given.add(name)
        names.append(name)
    return names


def _suffixed(name: str, identity: str, given: Collection[str]) -> str:
    """`name` with its unsafe characters as `_`, cut so that `_` and the hash fit; the hash
    grows in the (astronomically rare) case its first digits name a tool already."""
    safe = _UNSAFE.sub("_", name)
    if not safe[:1].isascii() or not (safe[:1].isalpha() or safe[:1] == "_"):
        safe = f"_{safe}"
    digest = hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()
    for digits in range(_HASH_DIGITS, len(digest) + 1):
        suffix = f"_{digest[:digits]}"
        candidate = safe[: NAME_LIMIT - len(suffix)] + suffix
        if candidate not in given:
            return candidate
    raise ValueError(f"no distinct name for {name!r}")
