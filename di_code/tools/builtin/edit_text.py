"""The pure part of edit: apply exact replacements, explain failures, keep line endings, diff.

Choices: every old_text must occur exactly once in the original text (occurrences may overlap
when counted); edits are matched against the original, never against each other's output, and
may not overlap. A file whose every newline is CRLF is edited as LF text (so a model's `\\n`
matches) and written back with CRLF; a file with mixed endings is matched byte for byte. A UTF-8
BOM is kept. When an old_text is missing, the window of the file most similar to it (difflib
ratio at least 0.5) is quoted, JSON-escaped so whitespace differences are visible, with its
line number.
"""

from __future__ import annotations

import difflib
import itertools
import json
from dataclasses import dataclass

from di_code.tools.builtin.errors import ToolError

BOM = "\ufeff"
MIN_SIMILARITY = 0.5
HINT_CHARS = 300
CANDIDATES = 8


@dataclass(frozen=True, slots=True)
class Edit:
    old_text: str
    new_text: str


@dataclass(frozen=True, slots=True)
class Document:
    """File text as edited (LF when the file is all CRLF), plus how to write it back."""

    text: str
    bom: bool
    crlf: bool

    @classmethod
    def parse(cls, raw: str) -> Document:
        bom = raw.startswith(BOM)
        text = raw.removeprefix(BOM)
        newlines = text.count("\n")
        crlf = newlines > 0 and text.count("\r\n") == newlines
        return cls(text.replace("\r\n", "\n") if crlf else text, bom, crlf)

    def render(self, text: str) -> str:
        """`text` in the file's own conventions."""
        body = text.replace("\n", "\r\n") if self.crlf else text
        return BOM + body if self.bom else body


def apply_edits(doc: Document, edits: list[Edit], shown: str) -> str:
    """The new text (in LF form if the document is CRLF); ToolError names the failing edit."""
    spans: list[tuple[int, int, int, str]] = []
    for number, edit in enumerate(edits, 1):
        prefix = f"Edit {number} of {len(edits)}: " if len(edits) > 1 else ""
        old = edit.old_text.replace("\r\n", "\n") if doc.crlf else edit.old_text
        new = edit.new_text.replace("\r\n", "\n") if doc.crlf else edit.new_text
        if not old:
            raise ToolError(f"{prefix}old_text is empty; quote the text to replace")
        start = doc.text.find(old)
        if start < 0:
            raise ToolError(f"{prefix}old_text not found in {shown}. {closest_hint(doc.text, old)}")
        count = _occurrences(doc.text, old, start)
        if count > 1:
            raise ToolError(
                f"{prefix}old_text occurs {count} times in {shown}; "
                "include more surrounding lines so it matches exactly once"
            )
        spans.append((start, start + len(old), number, new))
    spans.sort()
    for (_, end, first, _), (start, _, second, _) in itertools.pairwise(spans):
        if start < end:
            raise ToolError(
                f"Edits {min(first, second)} and {max(first, second)} overlap in {shown}; "
                "merge them into one edit"
            )
    pieces: list[str] = []
    position = 0
    for start, end, _, new in spans:
        pieces += [doc.text[position:start], new]
        position = end
    result = "".join([*pieces, doc.text[position:]])
    if result == doc.text:
        raise ToolError(f"No changes made to {shown}: every new_text equals its old_text")
    return result


def _occurrences(text: str, old: str, first: int) -> int:
    count, index = 0, first
    while index >= 0:
        count += 1
        index = text.find(old, index + 1)
    return count


def closest_hint(text: str, old: str) -> str:
    """One sentence pointing at the most similar window of lines, or advice to re-read."""
    lines = text.split("\n")
    size = max(1, len(old.split("\n")))
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(old)
    scored: list[tuple[float, int, str]] = []
    for index in range(max(1, len(lines) - size + 1)):
        window = "\n".join(lines[index : index + size])
        matcher.set_seq1(window)
        scored.append((matcher.quick_ratio(), index, window))
    scored.sort(key=lambda item: -item[0])
    best: tuple[float, int, str] = (0.0, 0, "")
    for _, index, window in scored[:CANDIDATES]:
        matcher.set_seq1(window)
        ratio = matcher.ratio()
        if ratio > best[0]:
            best = (ratio, index, window)
    if best[0] < MIN_SIMILARITY:
        return "No similar text found; read the file again and copy the exact text."
    quoted = json.dumps(best[2][:HINT_CHARS], ensure_ascii=False)
    return f"Closest match at line {best[1] + 1}: {quoted}"


def unified_diff(before: str, after: str, shown: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), f"a/{shown}", f"b/{shown}", lineterm=""
    )
    return "\n".join(lines)
