"""The hint an edit gives when its old_text is not in the file: the window of lines most like
it, found in bounded work whatever the sizes (a quadratic search stalls on a large file).

Every window of as many lines as old_text is scored by the words and symbols it shares with
old_text (a multiset overlap, kept up to date as the window slides down the file: linear), so
indentation and line-break differences cost nothing. The CANDIDATES best windows are then
compared character by character (difflib's ratio, quadratic: only when both are at most
COMPARED_CHARS long; longer ones keep their overlap score), and the best at MIN_SIMILARITY or
more is quoted, JSON-escaped so whitespace differences are visible, with its line number. A file
of more than SCANNED_CHARS is not searched.

An old_text copied with read's line numbers (`     3\tdef g():` on every line) is said to be
so, and looked for without them: the edit itself stays exact (a file may hold numbered lines of
its own, and text the model did not quote is never changed), but the miss says what to resend.
"""

from __future__ import annotations

import difflib
import heapq
import json
import re
from collections import Counter

MIN_SIMILARITY = 0.5
HINT_CHARS = 300
CANDIDATES = 8
COMPARED_CHARS = 1_500
SCANNED_CHARS = 4 * 1024 * 1024
"""A larger file is not searched: its tokens alone would take hundreds of MB."""
NO_MATCH = "No similar text found; read the file again and copy the exact text."
TOO_LARGE = "The file is too large to look for a similar text; read the lines you mean to change."
_TOKEN = re.compile(r"\w+|[^\w\s]")
_READ_NUMBER = re.compile(r" *([0-9]{1,18})\t")
"""What read puts before each line (`cat -n`'s number and tab)."""
NUMBERED = (
    "It starts its lines with read's line numbers (the number and the tab before each line), "
    "which are not part of the file"
)


def miss_hint(text: str, old: str) -> str:
    """Why `old` is not in `text`, and where the most similar lines are."""
    bare = without_read_numbers(old)
    if bare is None:
        return closest_hint(text, old)
    at = text.find(bare)
    if at >= 0:
        line = text.count("\n", 0, at) + 1
        where = f"without them it matches at line {line}"
        return f"{NUMBERED}; {where}: send only the text after each tab."
    return f"{NUMBERED}. {closest_hint(text, bare)}"


def without_read_numbers(old: str) -> str | None:
    """`old` without read's number and tab at the start of each line (its end may be a line
    break), when every line has them and they count up as read's do; None otherwise."""
    lines = old.split("\n")
    ending = [""] if len(lines) > 1 and not lines[-1] else []
    stripped: list[str] = []
    first = 0
    for index, line in enumerate(lines[: len(lines) - len(ending)]):
        match = _READ_NUMBER.match(line)
        if match is None:
            return None
        first = first if index else int(match[1])
        if int(match[1]) != first + index:
            return None
        stripped.append(line[match.end() :])
    return "\n".join(stripped + ending)


def closest_hint(text: str, old: str) -> str:
    """One sentence pointing at the most similar window of lines, or advice to re-read."""
    if len(text) > SCANNED_CHARS:
        return TOO_LARGE
    lines = text.split("\n")
    size = old.count("\n") + 1
    matcher = None
    if len(old) <= COMPARED_CHARS:
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(old)
    best: tuple[float, int, str] = (0.0, 0, "")
    for overlap, index in _candidates(lines, size, Counter(_TOKEN.findall(old))):
        window = "\n".join(lines[index : index + size])
        score = overlap
        if matcher is not None and len(window) <= COMPARED_CHARS:
            matcher.set_seq1(window)
            score = matcher.ratio()
        if score > best[0]:
            best = (score, index, window)
    if best[0] < MIN_SIMILARITY:
        return NO_MATCH
    quoted = json.dumps(best[2][:HINT_CHARS], ensure_ascii=False)
    return f"Closest match at line {best[1] + 1}: {quoted}"


def _candidates(lines: list[str], size: int, wanted: Counter[str]) -> list[tuple[float, int]]:
    """The scores and first lines of the windows of `size` lines that share the most tokens with
    `wanted` (Dice coefficient of the two multisets), best first, earlier first on a tie."""
    kept: list[list[str]] = []
    totals: list[int] = []
    for line in lines:
        found = _TOKEN.findall(line)
        totals.append(len(found))
        kept.append([token for token in found if token in wanted])
    want = sum(wanted.values())
    have: Counter[str] = Counter()
    shared = tokens = 0
    scored: list[tuple[float, int]] = []
    for end in range(len(lines)):
        for token in kept[end]:
            have[token] += 1
            shared += have[token] <= wanted[token]
        tokens += totals[end]
        if end >= size:  # the line above the window leaves it
            for token in kept[end - size]:
                shared -= have[token] <= wanted[token]
                have[token] -= 1
            tokens -= totals[end - size]
        if end >= size - 1 or (end == len(lines) - 1 and not scored):
            start = max(0, end - size + 1)
            scored.append((2 * shared / (want + tokens) if want + tokens else 0.0, -start))
    return [(score, -start) for score, start in heapq.nlargest(CANDIDATES, scored)]
