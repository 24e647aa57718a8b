"""Output limits shared by the tools: 2000 lines or 50 KB, whichever comes first (SPEC §4).

Only whole lines are kept. `Budget` counts lines and UTF-8 bytes (newlines included) so a
streaming reader can stop the moment the next line would not fit; `keep_head` and `keep_tail`
apply it to lines already in memory (grep/find/ls keep the head, bash keeps the tail).
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

    def to_dict(self) -> dict[str, object]:
        return {
            "truncated": True,
            "truncated_by": self.truncated_by,
            "total_lines": self.total_lines,
            "output_lines": self.output_lines,
        }


def keep_head(lines: Sequence[str]) -> tuple[list[str], Truncation | None]:
    """The first lines that fit the limits."""
    budget = Budget()
    kept: list[str] = []
    for line in lines:
        if not budget.take(line):
            assert budget.exhausted_by is not None
            return kept, Truncation(budget.exhausted_by, len(lines), len(kept))
        kept.append(line)
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
    if not kept:
        tail = lines[-1].encode("utf-8", "replace")[-MAX_BYTES:]
        kept = [tail.decode("utf-8", "ignore")]
    return kept, Truncation(budget.exhausted_by, len(lines), len(kept))
