"""Code in a subscript, for the catalogue of hidden forms (`bash_forms`): bash evaluates the
subscript of a name wherever it reads one, and runs any `$( )` or backticks in it."""

from __future__ import annotations

import re

_NAMED_BRACKET = re.compile(r"[A-Za-z_][0-9]*\[")
"""A name's last letter, its digits, then `[`: a name (`a9[`) opens a subscript here. Only
letters start a match, so a search never scans the same digits twice."""


def subscript_code(text: str) -> bool:
    """Whether `text` holds a subscript with `$` or a backtick in it: bash evaluates subscripts
    of names given to builtins (`printf -v 'a[$(id)]' x`), in assignments (`a['$(id)']=1`,
    `a=(['$(id)']=1)`) and in expansions (`${a['$(id)']}`), even from single-quoted words.
    Looked for in the line's text and in each word's value (`printf -va\\[\\$\\(id\\)\\] x`
    hides it behind backslashes). One pass over the pieces between `]`s, none of which a
    subscript crosses: a regular expression backtracked for hours over 30 KB of `[$`."""
    pieces = text.split("]")
    for index, piece in enumerate(pieces):
        named = _NAMED_BRACKET.search(piece)
        if named is not None and _holds_code(piece, named.end()):
            return True
        assigned = index + 1 < len(pieces) and pieces[index + 1].startswith(("=", "+="))
        opened = piece.find("[")
        if assigned and opened >= 0 and _holds_code(piece, opened + 1):
            return True
    return False


def _holds_code(piece: str, start: int) -> bool:
    return piece.find("$", start) >= 0 or piece.find("`", start) >= 0
