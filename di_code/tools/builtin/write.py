"""The write tool: create or overwrite a file with exactly the given text (UTF-8, no newline
translation), creating parent folders; serialized with edit through the per-file lock. The file
is replaced at once (see `atomic_write`): a failed write leaves the old content."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from di_code.agent.tool import ToolOutput, ToolUpdate
from di_code.ai.types import TextContent
from di_code.system.abort import AbortSignal
from di_code.system.files.opener import read_at_most
from di_code.system.files.resolve import Target
from di_code.tools.builtin.cards import WRITE
from di_code.tools.builtin.support.atomic_write import write_atomically
from di_code.tools.builtin.support.editor_files import EditorFiles
from di_code.tools.builtin.support.file_lock import file_lock, run_on_file
from di_code.tools.builtin.support.line_diff import unified_diff
from di_code.tools.common.base import WorkspaceTool
from di_code.tools.common.errors import ToolError
from di_code.tools.common.files import existing_file, open_regular, write_error
from di_code.tools.common.workspace import Workspace

PREVIEW_BYTES = 4_000_000
"""A file bigger than this is not diffed for an approval (it would hold up the question)."""


@dataclass(frozen=True, slots=True)
class WriteTool(WorkspaceTool):
    name: ClassVar[str] = WRITE.name
    description: ClassVar[str] = WRITE.description
    parameters: ClassVar[dict[str, Any]] = WRITE.parameters
    editor: EditorFiles | None = None
    """Where the text goes instead of the disk: the user's editor."""

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        data = params["content"].encode("utf-8")
        target, shown = self.workspace.resolve(params["path"], make_folders=True)
        if self.editor is not None:
            with target:  # the editor is not asked to write a FIFO or a device either
                existing_file(target, shown)
            async with file_lock(target.path):
                try:
                    await self.editor.write_text(target.path, params["content"])
                except OSError as exc:
                    raise write_error(exc, shown) from exc
        else:
            await run_on_file(target, lambda found: _write(found, shown, data), serialize=True)
        return [TextContent(f"Successfully wrote {len(data)} bytes to {shown}")]


def preview_write(workspace: Workspace, params: dict[str, Any]) -> str | None:
    """The diff a write would make to the file it replaces, without writing (what an
    approval question shows: what goes, not only what comes); None when there is no file
    there yet; ToolError when the path cannot be written."""
    target, shown = workspace.resolve(str(params.get("path", "")))
    with target:
        status = None if target.folder is None else existing_file(target, shown)
        if status is None:
            return None
        if status.st_size > PREVIEW_BYTES:
            raise ToolError(f"{shown} holds {status.st_size} bytes: too many to diff")
        with open_regular(target, shown) as f:
            try:
                before = read_at_most(f, PREVIEW_BYTES).decode("utf-8", errors="replace")
            except OSError:  # grew past the bound since its status was taken
                raise ToolError(f"{shown} holds too many bytes to diff") from None
    return unified_diff(before, str(params.get("content", "")), shown)


def _write(target: Target, shown: str, data: bytes) -> None:
    replaces = existing_file(target, shown)
    try:
        write_atomically(target, data, replaces)
    except OSError as exc:
        raise write_error(exc, shown) from exc
