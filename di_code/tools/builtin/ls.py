"""The ls tool: one folder's entries, sorted case-insensitively, dotfiles included, `/` after
folders (symlinks to folders too), `(empty directory)` for none, at most `limit` entries."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from di_code.agent.tool import ToolOutput, ToolResult, ToolUpdate
from di_code.ai.types import TextContent
from di_code.system.abort import AbortSignal
from di_code.system.names import escape_name
from di_code.tools.builtin.cards import LS, LS_DEFAULT_LIMIT
from di_code.tools.builtin.support.truncation import keep_head
from di_code.tools.common.base import WorkspaceTool
from di_code.tools.common.errors import ToolError
from di_code.tools.common.files import searchable


@dataclass(frozen=True, slots=True)
class LsTool(WorkspaceTool):
    name: ClassVar[str] = LS.name
    description: ClassVar[str] = LS.description
    parameters: ClassVar[dict[str, Any]] = LS.parameters

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        target, shown = self.workspace.resolve(params.get("path", "."))
        with target:
            if not searchable(target, shown):
                raise ToolError(f"Not a directory: {shown}")
        folder = target.path
        limit = params.get("limit", LS_DEFAULT_LIMIT)
        names = _entries(folder, shown)
        if not names:
            return ToolResult([TextContent("(empty directory)")])
        lines, cut = keep_head(names[:limit])
        notices = []
        if len(names) > limit:
            notices.append(f"[Showing {limit} of {len(names)} entries. "
                           f"Use limit={len(names)} to see all.]")  # fmt: skip
        if cut is not None:
            notices.append(f"[Output cut to the first {cut.output_lines} entries (50 KB limit).]")
        details = {"limit_reached": limit} if len(names) > limit else {}
        details.update(cut.to_dict() if cut else {})
        text = "\n".join(lines) + "".join(f"\n\n{notice}" for notice in notices)
        return ToolResult([TextContent(text)], details or None)


def _entries(folder: Path, shown: str) -> list[str]:
    try:
        with os.scandir(folder) as it:
            names = [escape_name(entry.name) + ("/" if entry.is_dir() else "") for entry in it]
    except FileNotFoundError:
        raise ToolError(f"Path not found: {shown}") from None
    except NotADirectoryError:
        raise ToolError(f"Not a directory: {shown}") from None
    except OSError as exc:
        raise ToolError(f"Cannot list {shown}: {exc.strerror or exc}") from None
    return sorted(names, key=lambda name: (name.lower(), name))
