"""A code review: the prompt that asks for one, and the findings read back from the answer.

Chat's built-in `/review` and `di-code review` both send `review_prompt(diff)`: the diff (as
di_code.session.review_diff read it, with what a cut left out), and the request to read the
files around each change and report in one documented line format:

    FINDING: path:line | high|medium|low | one line saying why
    VERDICT: one short line

`read_findings` parses that (so `di-code review --output-format json` can hand CI a list);
an answer without a VERDICT line, or a FINDING line out of the format, is a ReviewFormatError
with one line naming what was wrong.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from di_code.session.review_diff import ReviewDiff
from di_code.system.errors import DiCodeError

SEVERITIES = ("high", "medium", "low")
MAX_LINE_DIGITS = 9
"""A line number longer than this names no line of any file (and 5,000 digits are past what
Python's int() reads)."""
UNTRACKED_SHOWN = 200
"""New files named in the prompt; a tree of generated files is counted, not listed."""
Severity = Literal["high", "medium", "low"]
_FINDING = re.compile(
    r"FINDING:\s*`?(?P<path>[^`|]+?):(?P<line>\d+)`?\s*\|\s*(?P<severity>\w+)\s*\|\s*(?P<why>.+)",
    re.IGNORECASE,
)
_MARK = re.compile(r"^\s*(?:[-*]\s*)?\**(FINDING|VERDICT)\**:", re.IGNORECASE)
_VERDICT = re.compile(r"VERDICT:\s*(?P<verdict>.+)", re.IGNORECASE)

INSTRUCTIONS = """\
Review {what}. The diff is below. Change nothing: do not edit, write or run anything; read.
For each change, read the file around it (and what calls it, where that matters) with the
read, grep, find and ls tools before you judge it. Look for bugs, unhandled input and errors,
security problems, missing tests, and code that says one thing and does another; not for
style a formatter would fix.

End your answer with your findings, one line each, most severe first, in exactly this form:

FINDING: path:line | severity | one line saying why

where path is the file's path as the diff names it, line a line number in the new version of
the file, and severity one of high, medium, low. Then one last line:

VERDICT: a short verdict (for example: good to merge; needs a fix first)

With nothing to report, give the VERDICT line alone."""


@dataclass(frozen=True, slots=True)
class Finding:
    path: str
    line: int
    severity: Severity
    why: str


@dataclass(frozen=True, slots=True)
class ReviewReport:
    findings: tuple[Finding, ...]
    verdict: str


class ReviewFormatError(DiCodeError, ValueError):
    """The model's answer is not in the review format; the message is one line."""


def review_prompt(diff: ReviewDiff) -> str:
    """What the model is asked: the instructions, the diff, and what the diff leaves out."""
    parts = [INSTRUCTIONS.format(what=diff.target.describe())]
    if diff.untracked:
        names = "\n".join(f"  {_named(name)}" for name in diff.untracked[:UNTRACKED_SHOWN])
        more = len(diff.untracked) - UNTRACKED_SHOWN
        names += f"\n  ... and {more} more (find lists them)" if more > 0 else ""
        parts.append(f"New files not yet added to git (read them):\n{names}")
    if diff.left_out:
        parts.append(
            f"{diff.left_out}. Read what was left out from the files themselves, and say in "
            "the verdict that the diff was too long to review whole."
        )
    parts.append(f"<diff>\n{diff.diff.rstrip()}\n</diff>")
    return "\n\n".join(parts)


def _named(name: str) -> str:
    """A file's name on one line of the prompt: one with a line end or another control
    character in it is quoted (as JSON), so it cannot pass for lines of the prompt's own."""
    return name if name.isprintable() and name.strip() == name else json.dumps(name)


def read_findings(answer: str) -> ReviewReport:
    """The findings and the verdict in `answer`; ReviewFormatError when it is not in the
    format (the last VERDICT line counts; FINDING lines anywhere before it). Lines end at
    `\n` only: a U+2028, NEL or carriage return inside a `why` starts no finding of its own."""
    findings: list[Finding] = []
    verdict: str | None = None
    for number, raw in enumerate(answer.split("\n"), 1):
        mark = _MARK.match(raw)
        if mark is None:
            continue
        line = raw[mark.start(1) :].replace("**", "").strip()
        if mark.group(1).upper() == "VERDICT":
            said = _VERDICT.match(line)
            verdict = said.group("verdict").strip() if said else ""
            continue
        findings.append(_finding(line, number))
    if not verdict:
        raise ReviewFormatError("the model's answer has no VERDICT line: not a review to parse")
    return ReviewReport(tuple(findings), verdict)


def _finding(line: str, number: int) -> Finding:
    found = _FINDING.fullmatch(line)
    if found is None:
        raise ReviewFormatError(
            f"line {number} of the model's answer is not `FINDING: path:line | severity | why`"
        )
    severity = found.group("severity").lower()
    if severity not in SEVERITIES:
        raise ReviewFormatError(
            f"line {number} of the model's answer has severity {severity[:20]!r}, "
            f"not one of {', '.join(SEVERITIES)}"
        )
    path, digits = found.group("path").strip(), found.group("line")
    if PurePosixPath(path).is_absolute() or ".." in PurePosixPath(path).parts:
        raise ReviewFormatError(
            f"line {number} of the model's answer names a path outside the repository"
        )
    if len(digits.lstrip("0")) > MAX_LINE_DIGITS:
        raise ReviewFormatError(f"line {number} of the model's answer has no real line number")
    why = found.group("why").strip()
    return Finding(path, int(digits), severity, why)  # type: ignore[arg-type]
