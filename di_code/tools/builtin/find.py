"""The find tool: list files whose path matches a glob, honouring .gitignore.

Choices: only files are listed (as `rg --files` does), in `rg --sort path` order, relative to
the working directory. The glob is ripgrep's, with gitignore's rules: without a `/` it matches
a file name at any depth (`*.py`), with one it matches the path relative to the searched folder
(`src/**/*.ts`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from di_code.agent.tool import ToolOutput, ToolResult, ToolUpdate
from di_code.ai.types import TextContent
from di_code.system.abort import AbortSignal
from di_code.system.names import escape_name
from di_code.tools.builtin.cards import FIND, FIND_DEFAULT_LIMIT
from di_code.tools.builtin.support.ripgrep import (
    SearchFolder,
    find_ripgrep,
    glob_args,
    listed_files,
    overrides_gitignore,
    required,
    run_ripgrep,
    search_folder,
)
from di_code.tools.builtin.support.truncation import keep_head
from di_code.tools.common.base import WorkspaceTool
from di_code.tools.common.errors import ToolError, check_aborted
from di_code.tools.common.files import searchable


@dataclass(frozen=True, slots=True)
class FindTool(WorkspaceTool):
    ripgrep: str | None = field(default_factory=find_ripgrep)
    name: ClassVar[str] = FIND.name
    description: ClassVar[str] = FIND.description
    parameters: ClassVar[dict[str, Any]] = FIND.parameters

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        binary = required(self.ripgrep)
        target, shown = self.workspace.resolve(params.get("path", "."))
        pattern = params["pattern"]
        limit = int(params.get("limit", FIND_DEFAULT_LIMIT))
        with target:
            if not searchable(target, shown):
                raise ToolError(f"Not a directory: {shown}")
            with search_folder(target, True) as folder:
                found = await self._search(binary, folder, pattern, limit, signal)
        return self._result(found, limit, pattern)

    async def _search(
        self, binary: str, folder: SearchFolder, pattern: str, limit: int, signal: AbortSignal
    ) -> list[Path]:
        top = folder.path
        listed = None
        if overrides_gitignore(pattern):
            listed = await listed_files(binary, folder, signal)
        found: list[Path] = []

        def take(name: bytes) -> bool:
            """Keep what .gitignore does not leave out; one more than the limit tells that
            the limit was reached."""
            path = top / os.fsdecode(name)
            if listed is None or path in listed:
                found.append(path)
            return len(found) <= limit

        args = ["--files", "--null", "--sort", "path", *glob_args(pattern)]
        outcome = await run_ripgrep(binary, args, folder, signal, take, separator=b"\0")
        if outcome.failed and not signal.aborted:
            raise ToolError(f"find failed: {outcome.error}")
        check_aborted(signal)
        return found

    def _result(self, found: list[Path], limit: int, pattern: str) -> ToolResult:
        if not found:
            return ToolResult([TextContent(f"No files found matching {pattern}")])
        lines, cut = keep_head([escape_name(self.workspace.display(p)) for p in found[:limit]])
        notices = []
        details: dict[str, Any] = {}
        if len(found) > limit:
            notices.append(f"[Result limit {limit} reached. Use limit={limit * 2} for more, "
                           "or narrow the pattern.]")  # fmt: skip
            details["limit_reached"] = limit
        if cut is not None:
            notices.append(f"[Output cut to the first {cut.output_lines} results (50 KB limit). "
                           "Narrow the pattern.]")  # fmt: skip
            details.update(cut.to_dict())
        text = "\n".join(lines) + "".join(f"\n\n{notice}" for notice in notices)
        return ToolResult([TextContent(text)], details or None)
