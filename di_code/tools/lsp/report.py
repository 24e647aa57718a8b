"""What the model is told about diagnostics: the problems an edit introduced and those it
fixed in one file, compared without line numbers (lines move when text is added above), in
a bounded number of short lines. Pure: it knows nothing of servers."""

from __future__ import annotations

from collections import Counter
from typing import Any

from msgspec import Struct

from di_code.ai.codec import encodable

MAX_SHOWN = 20
"""Problems listed per result; the rest are counted."""
MAX_MESSAGE = 300
MAX_ORIGIN = 60
"""A diagnostic's source and code are cut at this many characters each."""
SEVERITIES = {1: "error", 2: "warning", 3: "info", 4: "hint"}


class Problem(Struct, frozen=True):
    line: int
    """1-based, as the model reads files."""
    column: int
    severity: str
    message: str
    source: str = ""
    code: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.severity, self.source, self.code, self.message)

    def to_dict(self, path: str) -> dict[str, Any]:
        return {
            "path": path, "line": self.line, "column": self.column, "severity": self.severity,
            "message": self.message, "source": self.source, "code": self.code,
        }  # fmt: skip

    def line_text(self, path: str) -> str:
        origin = " ".join(part for part in (self.source, self.code) if part)
        tail = f" [{origin}]" if origin else ""
        return f"{path}:{self.line}:{self.column}: {self.severity}: {self.message}{tail}"


def problem(diagnostic: Any, source: str) -> Problem:
    """A Problem from an lsprotocol Diagnostic (errors and warnings; the caller filters)."""
    start = diagnostic.range.start
    message = _cut(str(diagnostic.message), MAX_MESSAGE)
    code = "" if diagnostic.code is None else _cut(str(diagnostic.code), MAX_ORIGIN)
    severity = SEVERITIES.get(int(diagnostic.severity or 1), "error")
    origin = _cut(str(diagnostic.source or source), MAX_ORIGIN)
    return Problem(start.line + 1, start.character + 1, severity, message, origin, code)


def _cut(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters (an ellipsis says it was cut), a lone
    surrogate (valid in the server's JSON, not as text) made U+FFFD."""
    text = " ".join(encodable(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def serious(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity in ("error", "warning")]


def changes(before: list[Problem], after: list[Problem]) -> tuple[list[Problem], list[Problem]]:
    """(introduced, fixed): what `after` has more of than `before`, and the reverse, each
    matched by severity, source, code and message."""
    old, new = Counter(p.key for p in before), Counter(p.key for p in after)
    return _take(after, new - old, before), _take(before, old - new, after)


def _take(
    problems: list[Problem], wanted: Counter[tuple[str, str, str, str]], other: list[Problem]
) -> list[Problem]:
    """`wanted`'s problems from `problems`; of two alike, the one on a line where `other`
    has none is taken (the new one, not the old one it repeats)."""
    seen = {(p.line, p.key) for p in other}
    left, out = Counter(wanted), []
    for p in sorted(problems, key=lambda p: ((p.line, p.key) in seen, p.line, p.column)):
        if left[p.key] > 0:
            left[p.key] -= 1
            out.append(p)
    return out


def summary(
    path: str, introduced: list[Problem], fixed: list[Problem], unsure: bool = False
) -> str:
    """The lines appended to a write or edit result ('' when nothing changed); `unsure`:
    the problems before the change are not known (a server still reading the project)."""
    lines = []
    if introduced:
        maybe = "; some may predate this change" if unsure else ""
        lines.append(
            f"{'Problems' if unsure else 'New problems'} in {path} (language server{maybe}):"
        )
        lines += [p.line_text(path) for p in introduced[:MAX_SHOWN]]
        if len(introduced) > MAX_SHOWN:
            lines.append(f"... and {len(introduced) - MAX_SHOWN} more")
    if fixed:
        shown = "; ".join(f"{p.severity}: {p.message}" for p in fixed[:5])
        more = f" (and {len(fixed) - 5} more)" if len(fixed) > 5 else ""
        lines.append(f"Fixed in {path}: {shown}{more}")
    return "\n".join(lines)


def details(path: str, introduced: list[Problem], fixed: list[Problem]) -> dict[str, Any]:
    """The `details` keys for the UIs and the JSON output, bounded like the text."""
    out: dict[str, Any] = {"diagnostics": [p.to_dict(path) for p in introduced[:MAX_SHOWN]]}
    if len(introduced) > MAX_SHOWN:
        out["diagnostics_total"] = len(introduced)
    if fixed:
        out["fixed_diagnostics"] = [p.to_dict(path) for p in fixed[:MAX_SHOWN]]
    return out
