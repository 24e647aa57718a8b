"""The grep tool: search file contents with ripgrep (grep_search).

Output: one line per hit, `path:N: text` for a matching line and `path-N- text` for a context
line (as grep and rg mark them), paths relative to the working directory, lines cut at
LINE_CHARS characters. After `limit` matches the search stops; the context lines that follow the
last match are still shown. Then the 2000-line / 50 KB output limit applies.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from di_code.agent.tool import ToolOutput, ToolResult, ToolUpdate
from di_code.ai.types import TextContent
from di_code.system.abort import AbortSignal
from di_code.system.files.opener import open_target
from di_code.system.files.resolve import Target
from di_code.system.names import escape_name
from di_code.tools.builtin.cards import GREP, GREP_DEFAULT_LIMIT
from di_code.tools.builtin.support.grep_search import Hit, OneFile, Query, search
from di_code.tools.builtin.support.ripgrep import find_ripgrep, required, search_folder
from di_code.tools.builtin.support.truncation import keep_head
from di_code.tools.common.base import WorkspaceTool
from di_code.tools.common.errors import check_aborted
from di_code.tools.common.files import open_error, searchable
from di_code.tools.common.workspace import Workspace

LINE_CHARS = 500


@dataclass
class Collector:
    """Turns hits into output lines and decides when the search has enough."""

    workspace: Workspace
    limit: int
    context: int
    lines: list[str] = field(default_factory=list)
    matches: int = 0
    last_match: tuple[Path, int] | None = None
    limit_reached: bool = False

    def add(self, hit: Hit) -> bool:
        if self.matches >= self.limit:
            last = self.last_match
            if hit.is_match or last is None or hit.path != last[0]:
                self.limit_reached = True
                return False
            if hit.line > last[1] + self.context:
                self.limit_reached = True
                return False
        if hit.is_match:
            self.matches += 1
            self.last_match = (hit.path, hit.line)
        text = hit.text if len(hit.text) <= LINE_CHARS else hit.text[:LINE_CHARS] + "..."
        mark = ":" if hit.is_match else "-"
        path = escape_name(self.workspace.display(hit.path))
        self.lines.append(f"{path}{mark}{hit.line}{mark} {text}")
        return True


@dataclass(frozen=True, slots=True)
class GrepTool(WorkspaceTool):
    ripgrep: str | None = field(default_factory=find_ripgrep)
    name: ClassVar[str] = GREP.name
    description: ClassVar[str] = GREP.description
    parameters: ClassVar[dict[str, Any]] = GREP.parameters

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        binary = required(self.ripgrep)
        target, shown = self.workspace.resolve(params.get("path", "."))
        limit = params.get("limit", GREP_DEFAULT_LIMIT)
        collector = Collector(self.workspace, limit, params.get("context", 0))
        with target:
            is_folder = searchable(target, shown)  # a FIFO would block rg's open
            with search_folder(target, is_folder) as folder, _opened(target, is_folder) as file:
                query = Query(
                    params["pattern"], folder, file,
                    params.get("glob"), params.get("ignore_case", False),
                    params.get("literal", False), collector.context, limit,
                )  # fmt: skip
                await search(binary, query, signal, collector.add)
        check_aborted(signal)
        return _result(collector, limit)


@contextmanager
def _opened(target: Target, is_folder: bool) -> Iterator[OneFile | None]:
    """The file grep is given, opened through the file opener (no link followed)."""
    if is_folder:
        yield None
        return
    try:
        opened = open_target(target)
    except OSError as exc:  # swapped since it was resolved
        raise open_error(exc, str(target.path)) from exc
    with opened:
        yield OneFile(target.name, opened.fileno())


def _result(collector: Collector, limit: int) -> ToolResult:
    if not collector.lines:
        return ToolResult([TextContent("No matches found")])
    kept, cut = keep_head(collector.lines)
    notices: list[str] = []
    details: dict[str, Any] = {}
    if collector.limit_reached:
        notices.append(
            f"[Match limit {limit} reached. Use limit={limit * 2} for more, "
            "or narrow the pattern, path or glob.]"
        )
        details["limit_reached"] = limit
    if cut is not None:
        notices.append(
            f"[Output cut to the first {cut.output_lines} of {cut.total_lines} lines "
            "(2000 lines / 50 KB limit). Narrow the pattern, path or glob.]"
        )
        details.update(cut.to_dict())
    text = "\n".join(kept) + "".join(f"\n\n{notice}" for notice in notices)
    return ToolResult([TextContent(text)], details or None)
