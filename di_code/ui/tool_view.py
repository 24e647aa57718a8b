"""How one tool call looks: a header line with its arguments, then its collapsed result.

The header says what the call does in the words a person would use (`$ ls -la` for bash, the
path for read/write/edit); the body shows only the first few lines of the output, an edit's
diff, and errors in red. While the call runs, `RunningTool` shows a spinner, the elapsed time
and the last lines of the partial output (bash streams it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.text import Text

from di_code.ai.types import ToolResultMessage

RESULT_LINES = 4
ERROR_LINES = 8
DIFF_LINES = 24
PARTIAL_LINES = 5
SUMMARY_CHARS = 200


def summarize_call(name: str, arguments: Any) -> str:
    """One line that says what the call does."""
    args: dict[str, Any] = arguments if isinstance(arguments, dict) else {}
    text = _summary(name, args) if args else ""
    if not text:
        text = json.dumps(arguments, ensure_ascii=False) if arguments else ""
    first, *rest = text.splitlines() or [""]
    if rest:
        first += " …"
    return first if len(first) <= SUMMARY_CHARS else first[: SUMMARY_CHARS - 1] + "…"


def _summary(name: str, args: dict[str, Any]) -> str:
    path = str(args.get("path") or "")
    match name:
        case "bash":
            return f"$ {args.get('command', '')}"
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
        case _:
            return ""


def format_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def tool_header(name: str, arguments: Any, seconds: float, is_error: bool) -> Text:
    mark, style = ("✗", "bold red") if is_error else ("●", "bold green")
    header = Text.assemble((mark, style), " ", (name, "bold"), " ")
    header.append(summarize_call(name, arguments))
    header.append(f"  {format_seconds(seconds)}", style="dim")
    header.no_wrap = True
    header.overflow = "ellipsis"
    return header


def collapse(lines: list[str], keep: int, style: str) -> Text:
    """The first `keep` lines, indented, and how many more there were."""
    body = Text(no_wrap=True, overflow="ellipsis")
    for line in lines[:keep]:
        body.append(f"  {line}\n", style=style)
    if len(lines) > keep:
        more = len(lines) - keep
        body.append(f"  … {more} more line{'s' if more != 1 else ''}\n", style="dim")
    body.rstrip()
    return body


def diff_text(diff: str) -> Text:
    """A unified diff, coloured line by line, collapsed to DIFF_LINES."""
    lines = [line for line in diff.splitlines() if not line.startswith(("---", "+++"))]
    body = Text(no_wrap=True, overflow="ellipsis")
    for line in lines[:DIFF_LINES]:
        style = {"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "dim")
        body.append(f"  {line}\n", style=style)
    if len(lines) > DIFF_LINES:
        body.append(f"  … {len(lines) - DIFF_LINES} more diff lines\n", style="dim")
    body.rstrip()
    return body


def result_body(result: ToolResultMessage) -> Text:
    diff = result.details.get("diff") if isinstance(result.details, dict) else None
    if isinstance(diff, str) and diff and not result.is_error:
        return diff_text(diff)
    lines = result.text.rstrip("\n").splitlines()
    if any(block.type == "image" for block in result.content):
        lines.append("[image]")
    if result.is_error:
        return collapse(lines or ["failed"], ERROR_LINES, "red")
    return collapse(lines or ["(no output)"], RESULT_LINES, "dim")


def tool_block(name: str, arguments: Any, result: ToolResultMessage, seconds: float) -> Group:
    return Group(tool_header(name, arguments, seconds, result.is_error), result_body(result))


def compact_line(name: str, arguments: Any, result: ToolResultMessage, seconds: float) -> Text:
    """`run`'s progress: one line per call, the first line of an error after it."""
    line = tool_header(name, arguments, seconds, result.is_error)
    if result.is_error:
        first = (result.text.strip().splitlines() or ["failed"])[0]
        line.append(f"  {first}", style="red")
    return line


@dataclass(slots=True)
class RunningTool:
    """The live view of a call in progress; it reads the clock each time it is drawn."""

    name: str
    arguments: Any
    started: float
    clock: Callable[[], float]
    partial: list[str] = field(default_factory=list)

    def set_output(self, text: str) -> None:
        self.partial = text.rstrip("\n").splitlines()[-PARTIAL_LINES:]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.spinner import Spinner

        elapsed = format_seconds(max(0.0, self.clock() - self.started))
        label = Text.assemble((self.name, "bold"), " ", summarize_call(self.name, self.arguments))
        label.append(f"  {elapsed}", style="dim")
        label.no_wrap = True
        label.overflow = "ellipsis"
        yield Spinner("dots", label, style="cyan")
        if self.partial:
            yield collapse(self.partial, PARTIAL_LINES, "dim")
