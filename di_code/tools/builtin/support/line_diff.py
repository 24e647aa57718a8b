"""Unified diffs in bounded work, for texts a model sends (a write's content, an edit's old and
new text) and files of any size.

difflib's matcher is quadratic or worse on some inputs (short lines that repeat, but not often
enough for its junk heuristic), so a large file could stall the tool. Here the lines both sides
share at the start and at the end are set aside first (linear); difflib aligns what is left only
when it is at most DIFF_BUDGET line pairs, else that part is shown removed and added whole. An
edit's texts are cut at unchanged lines between its replacements first (`Applied.cuts`), so each
replacement is aligned on its own. The output is difflib's unified format, three lines of
context.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence

DIFF_BUDGET = 250_000
"""Line pairs difflib may align in one changed stretch (500 by 500 lines)."""
CONTEXT = 3

Opcode = tuple[str, int, int, int, int]


def unified_diff(before: str, after: str, shown: str) -> str:
    """The diff from `before` to `after`, headed `a/shown` and `b/shown`; "" when equal."""
    return chunked_diff([(before, after)], shown)


def chunked_diff(chunks: Sequence[tuple[str, str]], shown: str) -> str:
    """The diff of the texts the chunks make end to end, each chunk aligned on its own (every
    chunk but the last ends with a line break on both sides)."""
    before: list[str] = []
    after: list[str] = []
    codes: list[Opcode] = []
    for old, new in chunks:
        a, b = old.splitlines(), new.splitlines()
        codes += [
            (tag, i1 + len(before), i2 + len(before), j1 + len(after), j2 + len(after))
            for tag, i1, i2, j1, j2 in _opcodes(a, b)
        ]
        before += a
        after += b
    lines = [f"--- a/{shown}", f"+++ b/{shown}"]
    hunks = list(_hunks(_joined(codes)))
    if not hunks:
        return ""
    for hunk in hunks:
        _, i1, _, j1, _ = hunk[0]
        _, _, i2, _, j2 = hunk[-1]
        lines.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@")
        for tag, a1, a2, b1, b2 in hunk:
            if tag == "equal":
                lines += [f" {line}" for line in before[a1:a2]]
                continue
            lines += [f"-{line}" for line in before[a1:a2]]
            lines += [f"+{line}" for line in after[b1:b2]]
    return "\n".join(lines)


def _opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """How `b` differs from `a`: common ends set aside, the middle aligned within the budget."""
    size = min(len(a), len(b))
    head = 0
    while head < size and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < size - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    a_end, b_end = len(a) - tail, len(b) - tail
    codes: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    middle_a, middle_b = a[head:a_end], b[head:b_end]
    if len(middle_a) * len(middle_b) <= DIFF_BUDGET:
        matcher = difflib.SequenceMatcher(None, middle_a, middle_b)
        codes += [
            (tag, i1 + head, i2 + head, j1 + head, j2 + head)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        ]
    else:
        codes.append(("replace", head, a_end, head, b_end))
    if tail:
        codes.append(("equal", a_end, len(a), b_end, len(b)))
    return codes


def _joined(codes: list[Opcode]) -> list[Opcode]:
    """Neighbouring equal stretches (from two chunks) as one."""
    out: list[Opcode] = []
    for code in codes:
        if out and code[0] == out[-1][0] == "equal":
            out[-1] = ("equal", out[-1][1], code[2], out[-1][3], code[4])
        else:
            out.append(code)
    return out


def _hunks(codes: list[Opcode]) -> Iterator[list[Opcode]]:
    """The changes with CONTEXT equal lines around each, grouped as unified diffs show them
    (the grouping difflib's `get_grouped_opcodes` does)."""
    if not codes or all(code[0] == "equal" for code in codes):
        return
    if codes[0][0] == "equal":
        _, i1, i2, j1, j2 = codes[0]
        codes[0] = ("equal", max(i1, i2 - CONTEXT), i2, max(j1, j2 - CONTEXT), j2)
    if codes[-1][0] == "equal":
        _, i1, i2, j1, j2 = codes[-1]
        codes[-1] = ("equal", i1, min(i2, i1 + CONTEXT), j1, min(j2, j1 + CONTEXT))
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * CONTEXT:
            group.append((tag, i1, min(i2, i1 + CONTEXT), j1, min(j2, j1 + CONTEXT)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - CONTEXT), max(j1, j2 - CONTEXT)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it: first line (1-based), then count if not 1."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"
