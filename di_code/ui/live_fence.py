"""The live view of a code fence while it is being written, at the cost of one line a frame.

Rich highlights and lays out a whole code block every time it renders one: about a
millisecond a line, so a 40-line fence redrawn 12 times a second would take half a core.
While the fence is live, each of its lines is rendered on its own as a one-line fence and
kept; a frame renders only the line being written and stacks the kept ones between the
block's padding lines. A line highlighted alone may be coloured differently from the same
line in context (inside a multi-line string, say); that lasts only until the fence is
finished and printed whole.
"""

from __future__ import annotations

import re

from rich.console import Console, ConsoleOptions
from rich.segment import Segment

FENCE = re.compile(r" {0,3}(`{3,}(?=[^`]*$)|~{3,})")
"""A line that opens a code fence (a backtick fence's info string has no backtick)."""

Lines = list[list[Segment]]


def split_fence(tail: str) -> tuple[str, list[str]] | None:
    """(opening line, code lines) if `tail` is one code fence, open or closed and followed
    by nothing but blank lines; trailing blank code lines are dropped, as Rich does."""
    lines = tail.split("\n")
    opening = FENCE.match(lines[0])
    if opening is None:
        return None
    marker = opening.group(1)
    code = lines[1:]
    for index, line in enumerate(code):
        if _closes(line, marker):
            if any(rest.strip() for rest in code[index + 1 :]):
                return None
            code = code[:index]
            break
    while code and not code[-1].strip():
        code.pop()
    return lines[0], code


def _closes(line: str, marker: str) -> bool:
    body = line.lstrip(" ")
    fence = body.rstrip(" \t")
    return (
        len(line) - len(body) <= 3 and len(fence) >= len(marker) and fence == marker[0] * len(fence)
    )


class FencePreview:
    """The rendered lines of the code lines in view, kept from frame to frame. Each line is
    drawn as Rich draws a code block (the same Syntax settings; a test pins that they agree)
    without going through Markdown, which would double the cost of a line."""

    def __init__(self, theme: str) -> None:
        self._theme = theme
        self._key: tuple[str, int] = ("", -1)
        self._kept: dict[str, Lines] = {}

    def lines(
        self, console: Console, options: ConsoleOptions, opening: str, code: list[str]
    ) -> Lines:
        """The block with these code lines (at least one), as Rich draws it."""
        if (opening, options.max_width) != self._key:
            self._key, self._kept = (opening, options.max_width), {}
        language = opening.lstrip(" `~").partition(" ")[0] or "text"
        each = []
        for line in code:
            rendered = self._kept.get(line)
            if rendered is None:
                rendered = self._render(console, options, language, line)
            each.append(rendered)
        self._kept = dict(zip(code, each, strict=True))
        body = [row for rendered in each for row in rendered[1:-1]]
        return [each[0][0], *body, each[-1][-1]]

    def _render(self, console: Console, options: ConsoleOptions, language: str, line: str) -> Lines:
        """One code line as a block of its own: padding line, wrapped line(s), padding line."""
        from rich.syntax import Syntax

        syntax = Syntax(line, language, theme=self._theme, word_wrap=True, padding=1)
        return console.render_lines(syntax, options, pad=False)
