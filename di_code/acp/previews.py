"""The text a write's or edit's diff shows in the editor, taken through the file opener with the
tools' own confinement, so a preview can reach nothing the tool itself could not.

A preview is taken when the call starts (before its permission question) and again when it
ends. The path is resolved by the write tool's Workspace (its roots, `--add-dir` included): a
path outside them, or one that is not a regular file (a FIFO, a device), has no preview, and
the editor is never asked for it. From the disk at most PREVIEW_BYTES are read, in a worker
thread (never on the loop), opened without blocking; a larger file has no diff. With the
editor's file system the editor's buffer is asked for instead, for a path that passed the same
checks (a file not on disk yet is asked for too: it may be an unsaved buffer).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from di_code.agent.tool import unwrapped
from di_code.system.files.opener import open_target, read_at_most, status_of
from di_code.tools.builtin.cards import WRITE
from di_code.tools.builtin.support.editor_files import EditorFiles
from di_code.tools.builtin.write import PREVIEW_BYTES, WriteTool
from di_code.tools.common.errors import ToolError
from di_code.tools.common.workspace import Workspace

Preview = tuple[Path, str | None]
"""The file's real path and its text (None when there is none to show: absent, not UTF-8)."""
PreviewOf = Callable[[str], Awaitable[Preview | None]]
"""The preview of the path a call names; None when it has none (refused, too large)."""


def preview_of(tools: Callable[[], Iterable[Any]], editor: EditorFiles | None) -> PreviewOf:
    """Previews confined as the session's write tool (of `tools()` now) is; none without."""

    async def preview(raw: str) -> Preview | None:
        workspace = _write_workspace(tools())
        if workspace is None:
            return None
        found = await asyncio.to_thread(_on_disk, workspace, raw, editor is None)
        if found is None or editor is None:
            return found
        try:
            return found[0], await editor.read_text(found[0])
        except OSError:
            return found[0], None

    return preview


def confined(tools: Iterable[Any], path: Path) -> Path | None:
    """`path` as the session's write tool would write it, for undo to hand the editor (None:
    refused, as for a preview); in a worker thread, as it looks at the disk."""
    workspace = _write_workspace(tools)
    found = None if workspace is None else _on_disk(workspace, str(path), read=False)
    return None if found is None else found[0]


def _write_workspace(tools: Iterable[Any]) -> Workspace | None:
    """The folders the session's write tool is confined to (read from the tool itself, under
    its wrappers: lazy loading, diagnostics)."""
    for tool in tools:
        if getattr(tool, "name", None) == WRITE.name:
            real = unwrapped(tool)
            return real.workspace if isinstance(real, WriteTool) else None
    return None


def _on_disk(workspace: Workspace, raw: str, read: bool) -> Preview | None:
    """The confined path and (when `read`) its text on disk; None when refused."""
    try:
        target, _ = workspace.resolve(raw)
    except ToolError:
        return None
    with target:
        try:
            status = status_of(target)
            if status is None or not read:
                return target.path, None
            if status.st_size > PREVIEW_BYTES:
                return None
            with open_target(target) as f:
                return target.path, read_at_most(f, PREVIEW_BYTES).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
