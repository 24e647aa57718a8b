"""The pure part of edit: apply exact replacements, explain failures, keep line endings, diff.

Choices: every old_text must occur exactly once in the original text (occurrences may overlap
when counted), unless its edit says `replace_all`: then each of its non-overlapping occurrences,
from the start, is replaced (at least one must exist); edits are matched against the original,
never against each other's output, and may not overlap. A file whose every newline is CRLF is
edited as LF text (so a model's `\\n` matches) and written back with CRLF; a file with mixed
endings is matched byte for byte. A UTF-8 BOM is kept. When an old_text is missing, the window
of the file most similar to it is quoted, and one pasted with read's line numbers is said to be
(`closest_match`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from di_code.tools.builtin.support.closest_match import miss_hint
from di_code.tools.builtin.support.line_diff import chunked_diff
from di_code.tools.common.errors import ToolError, check_aborted

if TYPE_CHECKING:
    from di_code.system.abort import AbortSignal

BOM = "\ufeff"
SCANNED_PER_CALL = 1_000_000_000
"""Characters one call's edits may scan: each edit reads the whole text once (to find its
old_text and to know it is the only match), so thousands of edits of a large file were minutes
of work. A call over it is refused with how many edits fit; calls of that many are each
bounded, and the user can stop between them."""


@dataclass(frozen=True, slots=True)
class Edit:
    old_text: str
    new_text: str
    replace_all: bool = False


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


@dataclass(frozen=True, slots=True)
class Applied:
    """An edited text: before, after, and where both may be cut for the diff (after the first
    line break of the unchanged text between two replacements), so that each replacement is
    aligned on its own, in work bounded by its own size (`line_diff`)."""

    before: str
    after: str
    cuts: tuple[tuple[int, int], ...]

    def diff(self, shown: str) -> str:
        bounds = [(0, 0), *self.cuts, (len(self.before), len(self.after))]
        return chunked_diff(
            [(self.before[a:c], self.after[b:d]) for (a, b), (c, d) in itertools.pairwise(bounds)],
            shown,
        )


def apply_edits(
    doc: Document, edits: list[Edit], shown: str, signal: AbortSignal | None = None
) -> Applied:
    """The new text (in LF form if the document is CRLF); ToolError names the failing edit.
    A `signal` that fires stops the work between two edits (it runs on a thread that a stop
    must not wait for)."""
    if len(edits) > 1 and len(edits) * len(doc.text) > SCANNED_PER_CALL:
        most = max(1, SCANNED_PER_CALL // len(doc.text))
        raise ToolError(
            f"{len(edits)} edits are too many for one call on {shown} "
            f"({len(doc.text):,} characters): send at most {most} edits per call"
        )
    spans: list[tuple[int, int, int, str]] = []
    for number, edit in enumerate(edits, 1):
        if signal is not None:
            check_aborted(signal)
        prefix = f"Edit {number} of {len(edits)}: " if len(edits) > 1 else ""
        old = edit.old_text.replace("\r\n", "\n") if doc.crlf else edit.old_text
        new = edit.new_text.replace("\r\n", "\n") if doc.crlf else edit.new_text
        if not old:
            raise ToolError(f"{prefix}old_text is empty; quote the text to replace")
        start = doc.text.find(old)
        if start < 0:
            raise ToolError(f"{prefix}old_text not found in {shown}. {miss_hint(doc.text, old)}")
        if edit.replace_all:
            spans += [(at, at + len(old), number, new) for at in _occurrences(doc.text, old)]
            continue
        if doc.text.find(old, start + 1) >= 0:
            count = max(2, doc.text.count(old))  # str.count skips overlapping matches
            raise ToolError(
                f"{prefix}old_text occurs {count} times in {shown}; include more surrounding "
                "lines so it matches exactly once, or set replace_all to replace every one"
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
    cuts: list[tuple[int, int]] = []
    position = done = 0
    for start, end, _, new in spans:
        kept = doc.text[position:start]
        line_end = kept.find("\n")
        if pieces and line_end >= 0:
            cuts.append((position + line_end + 1, done + line_end + 1))
        pieces += [kept, new]
        done += len(kept) + len(new)
        position = end
    result = "".join([*pieces, doc.text[position:]])
    if result == doc.text:
        raise ToolError(f"No changes made to {shown}: every new_text equals its old_text")
    return Applied(doc.text, result, tuple(cuts))


def _occurrences(text: str, old: str) -> list[int]:
    """Where `old` starts in `text`, each match after the end of the one before."""
    found, start = [], text.find(old)
    while start >= 0:
        found.append(start)
        start = text.find(old, start + len(old))
    return found
