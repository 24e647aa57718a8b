"""What an approval question shows, in `chat` and in `run`: all that is approved, never cut.

A write shows its whole content, or its whole diff against the file it replaces; an edit its
whole diff; any other tool (an MCP server's) its server, its tool and its complete arguments.
Long lines wrap. A body taller than the screen shows its first and last lines around a line
that says how many are not shown and that `v` shows them all (in a pager): nothing approved is
ever out of reach, and the question itself stays on the screen.
"""

from __future__ import annotations

import json
from typing import Any

from rich.cells import cell_len, chop_cells
from rich.text import Span, Text

from di_code.system.safe_text import visible
from di_code.tools.builtin.edit import preview_diff
from di_code.tools.builtin.support.line_diff import unified_diff
from di_code.tools.builtin.write import preview_write
from di_code.tools.common.errors import ToolError
from di_code.tools.common.workspace import Workspace
from di_code.tools.policy.modes import PLAN_TOOL
from di_code.tools.policy.permissions import ApprovalRequest
from di_code.ui.tool_view import diff_text, summarize_call

VIEW_KEY = "v"
"""The key (or the answer, in `run`) that shows a body too tall for the screen in full."""
BACK_KEY = "q"
"""After VIEW_KEY in chat: back to the question (as `q` leaves a pager), never typed."""
MIN_ROWS = 8
"""A body gets at least this many rows, however small the screen."""


def edit_diff(arguments: dict[str, Any], workspace: Workspace | None = None) -> str:
    """The diff an edit would make: at the file's real line numbers when the file can be
    read, else a diff of the replacements alone."""
    if workspace is not None:
        try:
            return preview_diff(workspace, arguments)
        except (ToolError, KeyError, TypeError):
            pass
    edits = arguments.get("edits")
    if not isinstance(edits, list):
        edits = [arguments]
    lines: list[str] = []
    for edit in edits:
        if not isinstance(edit, dict):
            continue
        old, new = str(edit.get("old_text", "")), str(edit.get("new_text", ""))
        lines.extend(unified_diff(old, new, "").split("\n")[2:])  # its hunks, no file names
    return "\n".join(lines)


def write_body(arguments: dict[str, Any], workspace: Workspace | None = None) -> Text:
    """A write over a file: the diff against what it replaces; a new file, or one that cannot
    be diffed (why is said first): all the lines it would hold."""
    note = None
    if workspace is not None:
        try:
            diff = preview_write(workspace, arguments)
        except (ToolError, OSError) as exc:
            diff, note = None, Text(f"({visible(str(exc))}; the whole new content:)\n", "dim")
        if diff == "":
            return Text("(no change: the file already holds exactly this)", style="dim")
        if diff is not None:
            return diff_text(visible(diff), keep=None)
    lines = visible(str(arguments.get("content", ""))).splitlines()
    content = Text("\n".join(lines), "green") if lines else Text("(empty file)", "dim")
    return content if note is None else note + content


def arguments_body(tool_name: str, arguments: dict[str, Any]) -> Text:
    """Any other tool: its complete arguments, and for an MCP tool the server it goes to."""
    body = Text()
    _, server, tool = [*tool_name.split("__", 2), "", ""][:3]
    if tool_name.startswith("mcp__") and tool:
        body.append("MCP server ", style="dim")
        body.append(visible(server), style="bold")
        body.append(" · tool ", style="dim")
        body.append(visible(tool), style="bold")
        body.append("\n")
    shown = json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
    body.append(visible(shown) if arguments else "(no arguments)")
    return body


def approval_body(request: ApprovalRequest, workspace: Workspace | None = None) -> Text | None:
    """All a call would do, under the question's first line: None for a one-line bash
    command (it is the first line); a command of several lines is the body."""
    args = request.arguments
    match request.tool_name:
        case "bash":
            command = visible(str(args.get("command", "")))
            if "\n" not in command:
                return None
            body = Text(command)
        case "edit":
            body = diff_text(visible(edit_diff(args, workspace)), keep=None)
        case "write":
            body = write_body(args, workspace)
        case _ if request.tool_name == PLAN_TOOL:
            body = Text(visible(str(args.get("plan", "")).rstrip()))
        case _:
            body = arguments_body(request.tool_name, args)
    body.no_wrap, body.overflow = False, "fold"
    return body


def tall_command(request: ApprovalRequest, columns: int, rows: int) -> Text | None:
    """A one-line bash command taller than `rows` rows of `columns`, as the rows it wraps to:
    the body then, so that `fit` shows its first and last rows around how many lie between
    (a line is never cut: 100 KB on the first line scrolled its start away, with no `v`).
    None for any other call: its command is the first line, or its body is its own."""
    command = visible(str(request.arguments.get("command", "")))
    width, height = max(columns, 1), max(rows, 1)
    if request.tool_name != "bash" or "\n" in command or cell_len(command) <= width * height:
        return None
    body = Text("\n".join(chop_cells(command, width)))
    body.no_wrap, body.overflow = False, "fold"
    return body


def approval_header(request: ApprovalRequest, command_below: bool = False) -> Text:
    """The question's first line: the tool and the complete command (unless the body below
    holds it: a command of several lines, or a `tall_command`), or the path."""
    args = request.arguments
    header = Text.assemble(("? ", "bold yellow"), (visible(request.tool_name), "bold"), " ")
    if request.tool_name == "bash":
        command = visible(str(args.get("command", "")))
        header.append("$" if "\n" in command or command_below else f"$ {command}")
    elif request.tool_name in ("edit", "write"):
        header.append(visible(summarize_call(request.tool_name, args)))
    elif request.modes:
        header.append("presents its plan: nothing has changed yet")
    if request.why:  # a protected path: why the question is asked whatever the grants
        header.append(f"  ({visible(request.why)})", "yellow")
    return header


def fit(body: Text, rows: int, width: int) -> tuple[Text, int]:
    """`body` as it fits in `rows` rows of `width` columns: whole, or its first and last lines
    around one that says how many are left out and how to see them; with that count. Only
    the lines at the ends are measured and cut out of `body` (a diff may have millions)."""
    lines = body.plain.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()  # a last line break ends the last line (as Text.split takes it)
    rows = max(rows, MIN_ROWS)

    def heights(some: list[str]) -> list[int]:
        return [max(1, -(-cell_len(line) // max(width, 1))) for line in some]

    if len(lines) <= rows and sum(heights(lines)) <= rows:
        return body, 0
    head_heights = heights(lines[:rows])
    head = _fill(head_heights, (rows - 1) // 2)
    tail = _fill(heights(lines[: -rows - 1 : -1]), rows - 1 - sum(head_heights[:head]))
    hidden = len(lines) - head - tail
    marker = Text(
        f"… {hidden} more lines here: press {VIEW_KEY} to see all {len(lines)}",
        style="bold yellow",
    )
    head_end = sum(len(line) + 1 for line in lines[:head]) - 1
    end = sum(len(line) + 1 for line in lines) - 1
    tail_start = end - sum(len(line) + 1 for line in lines[len(lines) - tail :]) + 1
    first = [_cut(body, 0, head_end)] if head else []
    last = [_cut(body, tail_start, end)] if tail else []
    shown = Text("\n").join([*first, marker, *last])
    shown.no_wrap, shown.overflow = False, "fold"
    return shown, hidden


def _cut(body: Text, start: int, end: int) -> Text:
    """`body[start:end]` in one pass over its spans (Rich's slicing divides them all)."""
    spans = [
        Span(max(span.start, start) - start, min(span.end, end) - start, span.style)
        for span in body.spans
        if span.start < end and span.end > start
    ]
    return Text(body.plain[start:end], style=body.style, spans=spans)


def _fill(heights: list[int], rows: int) -> int:
    """How many of the lines (heights in rows, in order) fit in `rows`."""
    used = count = 0
    for height in heights:
        if used + height > rows:
            break
        used, count = used + height, count + 1
    return count
