"""Globs matched the way git's wildmatch matches them, in time linear in the path.

Why not simply a regex: a glob such as `**/a*a*a*a*b` turned into a Python regex backtracks
catastrophically (minutes for one path, with the GIL held, so not even Ctrl-C gets through).
pathspec and wcmatch translate globs to Python regexes too, so they share the problem. Here a
glob is a list of tokens. With at most one star it still runs as a regex (C speed; a single
quantifier cannot backtrack more than len(path) × len(glob)); with more, as an NFA whose state
sets become DFA states on first use (cached per glob): one dictionary step per character once
warm, at worst len(glob) work per character while building, never backtracking.

Syntax, as in git (gitignore(5), wildmatch.c): `?` is one character but `/`; `*` is any run
within a segment; `**` as a whole segment crosses folders (`**/x` and `a/**/b` also match zero
folders, a trailing `/**` one or more); any other `**` is `*`. `\\x` is a literal x. A bracket
expression `[...]` is one character but `/`, negated by a leading `!` or `^`; a `]` right after
the opening (or the negation) is literal; `a-z` is a range; `\\` escapes inside; POSIX classes
`[:alpha:]` etc. are ASCII. A character is a code point here; git compares bytes, so `?` and
ranges differ on non-ASCII names only.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from di_code.system.errors import DiCodeError

SPECIAL = "*?[\\"
"""git's glob-special characters."""

_GRAPH = "".join(map(chr, range(0x21, 0x7F)))
CLASSES: dict[str, str] = {
    "alnum": string.ascii_letters + string.digits,
    "alpha": string.ascii_letters,
    "blank": " \t",
    "cntrl": "".join(map(chr, range(0x20))) + "\x7f",
    "digit": string.digits,
    "graph": _GRAPH,
    "lower": string.ascii_lowercase,
    "print": " " + _GRAPH,
    "punct": string.punctuation,
    "space": " \t\n\r\v\f",
    "upper": string.ascii_uppercase,
    "xdigit": string.hexdigits,
}
"""The POSIX classes, ASCII only as in git."""

CACHE_LIMIT = 4096
"""Transitions kept per glob; past it the cache starts again (states are rebuilt on demand)."""


class GlobError(DiCodeError, ValueError):
    """A glob git would refuse to match anything with (unclosed `[`, unknown class, lone `\\`)."""


@dataclass(frozen=True, slots=True)
class CharSet:
    """One character out of a set: a literal (one char, not negated), `?`, or `[...]`."""

    chars: frozenset[str] = frozenset()
    ranges: tuple[tuple[str, str], ...] = ()
    classes: tuple[str, ...] = ()
    negated: bool = False
    slash: bool = False
    """Whether `/` can match: only for a literal `/`."""

    def accepts(self, c: str) -> bool:
        if c == "/" and not self.slash:
            return False
        found = (
            c in self.chars
            or any(low <= c <= high for low, high in self.ranges)
            or any(c in CLASSES[name] for name in self.classes)
        )
        return found != self.negated

    @property
    def literal(self) -> str | None:
        """The one character it stands for, if it is a literal (`[/]` is not: it is empty)."""
        if len(self.chars) == 1 and not (self.ranges or self.classes or self.negated):
            char = next(iter(self.chars))
            return char if char != "/" or self.slash else None
        return None

    def regex(self) -> str:
        literal = self.literal
        if literal is not None:
            return re.escape(literal)
        members = "".join(self.chars) + "".join(CLASSES[name] for name in self.classes)
        body = "".join(map(re.escape, sorted(set(members))))
        for low, high in self.ranges:
            body += f"{re.escape(low)}-{re.escape(high)}" if low <= high else ""
        if self.negated:
            return f"[^/{body}]"
        return f"(?!/)[{body}]" if body else "(?!)"


@dataclass(frozen=True, slots=True)
class Star:
    """Any run of characters: within one segment, or across folders (`**`)."""

    slash: bool


@dataclass(frozen=True, slots=True)
class Skip:
    """Matches nothing and may jump over the next `jump` tokens: `**/` is Skip(3), `**`, `/`,
    so that it also matches zero folders."""

    jump: int


Token = CharSet | Star | Skip
Engine = Literal["auto", "regex", "dfa"]
ANY_BUT_SLASH = CharSet(negated=True)


@dataclass(frozen=True, slots=True)
class Glob:
    """A parsed glob; `matches` tests a whole path (no leading or trailing `/`).

    The DFA runs after cheap checks of the literal prefix and suffix, which settle most paths
    that a glob such as `src/**/*.ts` does not match."""

    tokens: tuple[Token, ...]
    regex: re.Pattern[str] | None = None
    prefix: str = ""
    suffix: str = ""
    _start: int = 0
    _steps: dict[tuple[int, str], int] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, tokens: tuple[Token, ...], engine: Engine = "auto") -> Glob:
        """`engine` forces one, so that tests can hold the two to the same answers."""
        stars = sum(isinstance(token, Star) for token in tokens)
        if engine == "regex" or (engine == "auto" and stars <= 1):
            return cls(tokens, re.compile(_regex(tokens), re.S))
        prefix, suffix = _literal_run(tokens), _literal_run(reversed(_after_skips(tokens)))[::-1]
        return cls(tokens, None, prefix, suffix, cls(tokens)._close(1))

    def name_only(self) -> Glob | None:
        """For `**/x`, where x has no `/`: the glob x, which the last name alone must match."""
        match self.tokens:
            case (Skip(), Star(), CharSet(), *rest) if not any(
                isinstance(token, Skip) or getattr(token, "slash", False) for token in rest
            ):
                return Glob.of(tuple(rest))
        return None

    def matches(self, text: str) -> bool:
        if self.regex is not None:
            return self.regex.fullmatch(text) is not None
        if not (text.startswith(self.prefix) and text.endswith(self.suffix)):
            return False
        steps = self._steps
        state = self._start
        for c in text:
            step = steps.get((state, c))
            if step is None:
                if len(steps) > CACHE_LIMIT:
                    steps.clear()
                step = steps[(state, c)] = self._step(state, c)
            if not step:
                return False
            state = step
        return bool(state >> len(self.tokens) & 1)

    def _step(self, state: int, c: str) -> int:
        """The NFA step: bit i set means the first i tokens have matched; a star keeps its
        own bit while it swallows characters."""
        following = 0
        for i, token in enumerate(self.tokens):
            if not state >> i & 1:
                continue
            if isinstance(token, Star):
                if token.slash or c != "/":
                    following |= 1 << i
            elif isinstance(token, CharSet) and token.accepts(c):
                following |= 1 << (i + 1)
        return self._close(following)

    def _close(self, state: int) -> int:
        """Add what stars and skips reach by matching nothing (edges only go forward)."""
        for i, token in enumerate(self.tokens):
            if state >> i & 1:
                if isinstance(token, Star):
                    state |= 1 << (i + 1)
                elif isinstance(token, Skip):
                    state |= 1 << (i + 1) | 1 << (i + token.jump)
        return state


@functools.lru_cache(maxsize=256)
def parse_glob(pattern: str) -> Glob:
    """Parse a glob; GlobError when it cannot match anything.

    git compares the literal run before the first special character, then wildmatches the
    rest as a pattern of its own: a `**` right after that run counts as starting a segment
    (`a/b**` matches `a/bc/d`). That quirk is kept, so both read a .gitignore alike."""
    prefix = next((i for i, c in enumerate(pattern) if c in SPECIAL), len(pattern))
    tokens: list[Token] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            end = i
            while end < len(pattern) and pattern[end] == "*":
                end += 1
            starts = i in (0, prefix) or pattern[i - 1] == "/"
            ends = end == len(pattern) or pattern.startswith(("/", "\\/"), end)
            if end - i >= 2 and starts and ends:
                tokens += [Skip(3)] if pattern.startswith("/", end) else []
                tokens.append(Star(slash=True))
            else:
                tokens.append(Star(slash=False))
            i = end
        elif c == "?":
            tokens.append(ANY_BUT_SLASH)
            i += 1
        elif c == "[":
            token, i = _bracket(pattern, i + 1)
            tokens.append(token)
        else:
            if c == "\\":
                i += 1
                if i == len(pattern):
                    raise GlobError("it ends with a lone backslash")
                c = pattern[i]
            tokens.append(CharSet(frozenset(c), slash=c == "/"))
            i += 1
    return Glob.of(tuple(tokens))


def _after_skips(tokens: tuple[Token, ...]) -> tuple[Token, ...]:
    """The tokens after the last optional run (`**/`): only those must end every match."""
    ends = [i + token.jump for i, token in enumerate(tokens) if isinstance(token, Skip)]
    return tokens[max(ends, default=0) :]


def _literal_run(tokens: Iterable[Token]) -> str:
    """The literal characters the tokens start with."""
    run: list[str] = []
    for token in tokens:
        char = token.literal if isinstance(token, CharSet) else None
        if char is None:
            break
        run.append(char)
    return "".join(run)


def _regex(tokens: tuple[Token, ...]) -> str:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if isinstance(token, Skip):
            out.append(f"(?:{_regex(tokens[i + 1 : i + token.jump])})?")
            i += token.jump
            continue
        if isinstance(token, Star):
            out.append(".*" if token.slash else "[^/]*")
        else:
            out.append(token.regex())
        i += 1
    return "".join(out)


def _bracket(pattern: str, i: int) -> tuple[CharSet, int]:
    """The bracket expression whose body starts at `i`, and the index after its `]`."""
    negated = pattern[i : i + 1] in ("!", "^")
    i += negated
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    classes: list[str] = []
    previous: str | None = None
    first = True
    while True:
        if i >= len(pattern):
            raise GlobError("a '[' is never closed")
        c = pattern[i]
        if c == "]" and not first:
            return CharSet(frozenset(chars), tuple(ranges), tuple(classes), negated), i + 1
        first = False
        if c == "\\":
            c = _escaped(pattern, i + 1)
            i += 1
        elif c == "-" and previous and pattern[i + 1 : i + 2] not in ("", "]"):
            i += 1
            high = pattern[i]
            if high == "\\":
                high = _escaped(pattern, i + 1)
                i += 1
            ranges.append((previous, high))
            previous = None
            i += 1
            continue
        elif pattern.startswith("[:", i):
            close = pattern.find("]", i + 2)
            if close == -1:
                raise GlobError("a '[' is never closed")
            if close > i + 2 and pattern[close - 1] == ":":
                name = pattern[i + 2 : close - 1]
                if name not in CLASSES:
                    raise GlobError(f"[:{name}:] is not a character class")
                classes.append(name)
                previous = None
                i = close + 1
                continue
        chars.add(c)
        previous = c
        i += 1


def _escaped(pattern: str, i: int) -> str:
    if i >= len(pattern):
        raise GlobError("a '[' is never closed")
    return pattern[i]
