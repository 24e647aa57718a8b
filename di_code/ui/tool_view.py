"""How one tool call looks: a Rich panel titled with what the call does, its collapsed result
inside, its status on the border.

The title says what the call does in the words a person would use (`bash $ ls -la`, the path
for read/write/edit). The body keeps the part of the output that matters: for bash the LAST
lines (the failing test, the summary, `Command exited with code 1` are at the end), for
read/grep/find/ls the first ones, an edit's diff. While the call runs, `RunningTool` is the
same panel with a spinner, the elapsed time and the last lines of the partial output; when it
ends the finished panel is printed once (green or red border, the duration and exit code in
the subtitle). Every string from outside goes through `visible()`.

A call that delegates (the `task` tool: its `details.tool_calls` list a subagent's calls) shows
those calls nested in its panel, one line each with its state (◌ running, ✓ done, ✗ failed),
folded to the last NESTED_LINES with a count of the earlier ones; Ctrl-O lists them all.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Span, Text

from di_code.ai.types import ToolResultMessage
from di_code.system.safe_text import visible

if TYPE_CHECKING:
    from rich.panel import Panel

RESULT_LINES = 4
TAIL_LINES = 6
ERROR_LINES = 8
DIFF_LINES = 24
PARTIAL_LINES = 5
SUMMARY_CHARS = 200
NESTED_LINES = 4
NESTED_MARKS = {"running": ("◌", "cyan"), "done": ("✓", "green"), "failed": ("✗", "red")}
TAIL_FIRST = frozenset({"bash", "!"})
"""Tools whose output is read from the end: the outcome of a command comes last."""


def summarize_call(name: str, arguments: Any) -> str:
    """One line that says what the call does."""
    args: dict[str, Any] = arguments if isinstance(arguments, dict) else {}
    text = _summary(name, args) if args else ""
    if not text:
        text = json.dumps(arguments, ensure_ascii=False) if arguments else ""
    first, *rest = text.splitlines() or [""]
    if rest:
        first += " …"
    first = visible(first)
    return first if len(first) <= SUMMARY_CHARS else first[: SUMMARY_CHARS - 1] + "…"


def _summary(name: str, args: dict[str, Any]) -> str:
    path = str(args.get("path") or "")
    match name:
        case "bash":
            return f"$ {args.get('command', '')}"
        case "!":
            return str(args.get("command", ""))
        case "read":
            window = [f"{key}={args[key]}" for key in ("offset", "limit") if key in args]
            return " ".join([path, *window])
        case "write":
            lines = len(str(args.get("content", "")).splitlines())
            return f"{path} ({lines} line{'s' if lines != 1 else ''})"
        case "edit" | "ls":
            return path or "."
        case "grep" | "find":
            where = f" in {path}" if path else ""
            glob = f" ({args['glob']})" if args.get("glob") else ""
            return f"{args.get('pattern', '')}{where}{glob}"
        case "task":
            kind = f" ({args['subagent_type']})" if args.get("subagent_type") else ""
            return f"{args.get('description') or args.get('prompt', '')}{kind}"
        case "lsp":
            return _lsp_summary(args)
        case "exit_plan_mode":
            return next((line for line in str(args.get("plan", "")).splitlines() if line), "")
        case _:
            return ""


def _lsp_summary(args: dict[str, Any]) -> str:
    """`definition app.py:3:5`, `references load_config`, `symbols app.py`, `diagnostics`."""
    where = str(args.get("path") or "")
    if where and isinstance(args.get("line"), int):
        where += f":{args['line']}" + (
            f":{args['character']}" if isinstance(args.get("character"), int) else ""
        )
    symbol = str(args.get("symbol") or "")
    what = f"{symbol} in {where}" if symbol and where else symbol or where
    return " ".join(part for part in (str(args.get("operation") or ""), what) if part)


def format_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def tool_title(name: str, arguments: Any) -> Text:
    """`bash $ pytest -q`: the tool and what it does, one line."""
    title = Text.assemble((visible(name), "bold"), " ", summarize_call(name, arguments))
    if name == "!":
        title = Text.assemble(("!", "bold"), summarize_call(name, arguments))
    title.no_wrap = True
    title.overflow = "ellipsis"
    return title


def tool_header(name: str, arguments: Any, seconds: float, is_error: bool) -> Text:
    """`run`'s one-line form of a finished call."""
    mark, style = ("✗", "bold red") if is_error else ("●", "bold green")
    header = Text.assemble((mark, style), " ")
    header.append_text(tool_title(name, arguments))
    header.append(f"  {format_seconds(seconds)}", style="dim")
    header.no_wrap = True
    header.overflow = "ellipsis"
    return header


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def collapse(lines: list[str], keep: int, style: str) -> Text:
    """The first `keep` lines and how many more there were."""
    body = Text(no_wrap=True, overflow="ellipsis")
    for line in lines[:keep]:
        body.append(f"{visible(line)}\n", style=style)
    if len(lines) > keep:
        body.append(f"… {_plural(len(lines) - keep, 'more line')}\n", style="dim")
    body.rstrip()
    return body


def collapse_tail(lines: list[str], keep: int, style: str) -> Text:
    """How many lines came before, then the last `keep` lines."""
    body = Text(no_wrap=True, overflow="ellipsis")
    if len(lines) > keep:
        body.append(f"… {_plural(len(lines) - keep, 'earlier line')}\n", style="dim")
    for line in lines[-keep:] if keep else []:
        body.append(f"{visible(line)}\n", style=style)
    body.rstrip()
    return body


def diff_text(diff: str, keep: int | None = DIFF_LINES) -> Text:
    """A unified diff, coloured line by line, collapsed to `keep` lines (None: all of it)."""
    lines = [line for line in diff.splitlines() if not line.startswith(("---", "+++"))]
    keep = len(lines) if keep is None else keep
    pieces: list[str] = []
    spans: list[Span] = []
    at = 0
    for line in lines[:keep]:  # one Text built at once: appending line by line took a minute
        style = {"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "dim")
        piece = f"{visible(line)}\n"
        pieces.append(piece)
        spans.append(Span(at, at + len(piece), style))
        at += len(piece)
    body = Text("".join(pieces), no_wrap=True, overflow="ellipsis", spans=spans)
    if len(lines) > keep:
        body.append(f"… {len(lines) - keep} more diff lines\n", style="dim")
    body.rstrip()
    return body


def nested_calls(details: Any) -> list[dict[str, Any]] | None:
    """The subagent calls a delegating call's details list, or None for any other call."""
    calls = details.get("tool_calls") if isinstance(details, dict) else None
    if not isinstance(calls, list):
        return None
    return [call for call in calls if isinstance(call, dict)]


def nested_state(call: dict[str, Any]) -> str:
    """A subagent call gets its `is_error` when it ends; until then it is running."""
    if "is_error" not in call:
        return "running"
    return "failed" if call["is_error"] else "done"


def nested_line(call: dict[str, Any]) -> Text:
    """`✓ read src/app.py`: the call's state, its tool and what it does."""
    mark, style = NESTED_MARKS[nested_state(call)]
    name = str(call.get("name", "?"))
    does = summarize_call(name, call.get("arguments"))
    return Text.assemble((mark, style), " ", (visible(name), "bold"), " ", does)


def nested_view(calls: list[dict[str, Any]], keep: int | None = NESTED_LINES) -> Text:
    """The calls, one line each: the last `keep` (None: all) after a count of the others."""
    shown = calls if keep is None else calls[-keep:] if keep else []
    body = Text(no_wrap=True, overflow="ellipsis")
    if len(calls) > len(shown):
        body.append(f"… {_plural(len(calls) - len(shown), 'earlier call')}\n", style="dim")
    for call in shown:
        body.append_text(nested_line(call))
        body.append("\n")
    body.rstrip()
    return body


def with_nested(calls: list[dict[str, Any]] | None, body: Text, keep: int | None) -> Text:
    """`body` under the subagent's calls, when there are any."""
    if not calls:
        return body
    joined = Text("\n").join([nested_view(calls, keep), body])
    joined.no_wrap, joined.overflow = body.no_wrap, body.overflow
    return joined


def output_lines(result: ToolResultMessage) -> list[str]:
    lines = result.text.rstrip("\n").splitlines()
    if any(block.type == "image" for block in result.content):
        lines.append("[image]")
    return lines


def result_body(result: ToolResultMessage, diff_shown: bool = False) -> Text:
    """`diff_shown`: the diff was in the approval question, so only the outcome is shown."""
    diff = result.details.get("diff") if isinstance(result.details, dict) else None
    if isinstance(diff, str) and diff and not result.is_error and not diff_shown:
        return problems_under(diff_text(diff), result.details.get("diagnostics"))
    lines = output_lines(result)
    style, keep = ("red", ERROR_LINES) if result.is_error else ("dim", RESULT_LINES)
    if not lines:
        lines = ["failed" if result.is_error else "(no output)"]
    if result.tool_name in TAIL_FIRST:
        return collapse_tail(lines, max(keep, TAIL_LINES), style)
    return collapse(lines, keep, style)


def problems_under(body: Text, problems: Any) -> Text:
    """An edit's diff with the language servers' new problems (`details.diagnostics`) under
    it, in red: the diff alone would hide them."""
    if not isinstance(problems, list) or not problems:
        return body
    lines = [
        f"{p.get('path')}:{p.get('line')}:{p.get('column')}: {p.get('severity')}: "
        f"{p.get('message')}"
        for p in problems[:DIFF_LINES]
        if isinstance(p, dict)
    ]
    return Text("\n").join([body, Text(visible("\n".join(lines)), style="red")])


def status_line(result: ToolResultMessage, seconds: float | None) -> str | None:
    """The subtitle of a finished call: `exit 1 · 0.3s`, `failed · 0.3s` or `0.3s` (no time
    for a call replayed from a saved session)."""
    details = result.details if isinstance(result.details, dict) else {}
    code, calls = details.get("exit_code"), details.get("tool_calls")
    parts = [f"exit {code}"] if isinstance(code, int) and code != 0 else []
    if isinstance(calls, list):  # a subagent's
        parts.append(_plural(len(calls), "tool call"))
    if result.is_error and not parts:
        parts.append("failed")
    if seconds is not None:
        parts.append(format_seconds(seconds))
    return " · ".join(parts) or None


def framed(body: RenderableType, title: Text, border: str, subtitle: str | None = None) -> Panel:
    """A tool-call box: title top left, status bottom right."""
    from rich.panel import Panel

    return Panel(
        body,
        title=title,
        title_align="left",
        subtitle=Text(subtitle, style=border) if subtitle else None,
        subtitle_align="right",
        border_style=border,
        padding=(0, 1),
    )


def tool_panel(
    name: str,
    arguments: Any,
    result: ToolResultMessage,
    seconds: float | None = None,
    diff_shown: bool = False,
) -> Panel:
    """A finished call, as printed once into the scrollback."""
    border = "red" if result.is_error else "green"
    body = with_nested(nested_calls(result.details), result_body(result, diff_shown), NESTED_LINES)
    return framed(body, tool_title(name, arguments), border, status_line(result, seconds))


def full_output_panel(number: int, name: str, arguments: Any, result: ToolResultMessage) -> Panel:
    """Ctrl-O and /expand: every line the call returned (after every call of its subagent)."""
    lines = output_lines(result) or ["(no output)"]
    body = Text("\n".join(visible(line) for line in lines), style="red" if result.is_error else "")
    body = with_nested(nested_calls(result.details), body, None)
    transcript = result.details.get("transcript") if isinstance(result.details, dict) else None
    if isinstance(transcript, str):  # a subagent's whole conversation is kept there
        body.append(f"\ntranscript: {visible(transcript)}", style="dim")
    title = Text(f"#{number} ", style="dim")
    title.append_text(tool_title(name, arguments))
    border = "red" if result.is_error else "green"
    return framed(body, title, border, _plural(len(lines), "line"))


def compact_line(name: str, arguments: Any, result: ToolResultMessage, seconds: float) -> Text:
    """`run`'s progress: one line per call, the first line of an error after it."""
    line = tool_header(name, arguments, seconds, result.is_error)
    if result.is_error:
        first = (result.text.strip().splitlines() or ["failed"])[0]
        line.append(f"  {visible(first)}", style="red")
    for call in nested_calls(result.details) or []:  # a log: every call of a subagent
        line.append("\n  ")
        line.append_text(nested_line(call))
    return line


def new_spinner() -> Any:
    """Rich's dots spinner: 10 frames, one every 80 ms (12.5 a second)."""
    from rich.spinner import Spinner

    return Spinner("dots", style="cyan")


@dataclass(slots=True)
class RunningTool:
    """The live panel of a call in progress; it reads the clock each time it is drawn. The
    spinner is made once per call: a Spinner keeps its start time and picks its frame from
    the time it is drawn at, so a new one on every redraw would stay on its first frame."""

    name: str
    arguments: Any
    started: float
    clock: Callable[[], float]
    partial: list[str] = field(default_factory=list)
    earlier: int = 0
    calls: list[dict[str, Any]] | None = None
    """A subagent's calls so far, drawn instead of the partial output."""
    spinner: Any = field(default_factory=new_spinner)

    def set_output(self, text: str, details: Any = None) -> None:
        lines = text.rstrip("\n").splitlines()
        self.partial = lines[-PARTIAL_LINES:]
        self.earlier = len(lines) - len(self.partial)
        self.calls = nested_calls(details)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.table import Table

        elapsed = format_seconds(max(0.0, self.clock() - self.started))
        status = Table.grid(padding=(0, 1))
        status.add_row(self.spinner, Text(f"running  {elapsed}", style="dim"))
        parts: list[RenderableType] = [status]
        if self.calls:
            parts.append(nested_view(self.calls))
        elif self.partial:
            body = collapse_tail(self.partial, PARTIAL_LINES, "dim")
            if self.earlier:
                marker = f"… {_plural(self.earlier, 'earlier line')}\n"
                body = Text(marker, style="dim", no_wrap=True, overflow="ellipsis") + body
            parts.append(body)
        yield framed(Group(*parts), tool_title(self.name, self.arguments), "cyan")
