"""Output limits shared by the tools: 2000 lines or 50 KB, whichever comes first.

Whole lines are kept where they fit. `Budget` counts lines and UTF-8 bytes (newlines
included) so a streaming reader can stop the moment the next line would not fit; `keep_head`
and `keep_tail` apply it to lines already in memory (grep/find/ls and fetch keep the head, bash
keeps the tail). A bound never leaves nothing: a line longer than the whole byte limit is cut
inside (at a character boundary), and fetch's prose fills the limit with the start of the line
that did not fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

MAX_LINES = 2000
MAX_BYTES = 50 * 1024

TruncatedBy = Literal["lines", "bytes"]


@dataclass(slots=True)
class Budget:
    max_lines: int = MAX_LINES
    max_bytes: int = MAX_BYTES
    lines: int = 0
    bytes: int = 0
    exhausted_by: TruncatedBy | None = None

    def take(self, line: str) -> bool:
        """Count `line` if it fits; otherwise remember which limit stopped it."""
        size = len(line.encode("utf-8", "replace")) + (1 if self.lines else 0)
        if self.lines >= self.max_lines:
            self.exhausted_by = "lines"
        elif self.bytes + size > self.max_bytes:
            self.exhausted_by = "bytes"
        else:
            self.lines += 1
            self.bytes += size
            return True
        return False


@dataclass(frozen=True, slots=True)
class Truncation:
    """What was cut, for `details` (the UI) and for the notice the model reads."""

    truncated_by: TruncatedBy
    total_lines: int
    output_lines: int
    line_cut: bool = False
    """The last line kept (the first, for a tail) is only part of its line."""

    def to_dict(self) -> dict[str, object]:
        cut = {"line_cut": True} if self.line_cut else {}
        return {
            "truncated": True,
            "truncated_by": self.truncated_by,
            "total_lines": self.total_lines,
            "output_lines": self.output_lines,
            **cut,
        }


def head_bytes(text: str, limit: int) -> str:
    """The start of `text` that fits `limit` UTF-8 bytes, never half a character."""
    return text.encode("utf-8", "replace")[:limit].decode("utf-8", "ignore")


def keep_head(lines: Sequence[str], fill: bool = False) -> tuple[list[str], Truncation | None]:
    """The first lines that fit the limits. The line the byte limit stops is cut to what still
    fits when nothing was kept before it, or always with `fill` (prose, where the start of a
    paragraph is worth reading)."""
    budget = Budget()
    kept: list[str] = []
    for line in lines:
        if budget.take(line):
            kept.append(line)
            continue
        room = budget.max_bytes - budget.bytes - (1 if kept else 0)
        part = head_bytes(line, room) if budget.exhausted_by == "bytes" and room > 0 else ""
        cut = bool(part) and (fill or not kept)
        if cut:
            kept.append(part)
        assert budget.exhausted_by is not None
        return kept, Truncation(budget.exhausted_by, len(lines), len(kept), cut)
    return kept, None


def keep_tail(lines: Sequence[str]) -> tuple[list[str], Truncation | None]:
    """The last lines that fit the limits; a single over-long last line keeps its end."""
    budget = Budget()
    count = 0
    for line in reversed(lines):
        if not budget.take(line):
            break
        count += 1
    if budget.exhausted_by is None:
        return list(lines), None
    kept = list(lines[len(lines) - count :])
    if kept:
        return kept, Truncation(budget.exhausted_by, len(lines), len(kept))
    tail = lines[-1].encode("utf-8", "replace")[-MAX_BYTES:]
    return [tail.decode("utf-8", "ignore")], Truncation(budget.exhausted_by, len(lines), 1, True)
