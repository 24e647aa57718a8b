"""The edit tool: exact text replacements in one file, all or nothing, under the file's lock.

The rules (unique, non-overlapping, endings and BOM kept, closest-match hints) live in
`edit_text`; this module reads and writes the file and shapes the result: a short sentence for
the model and `{"diff", "path"}` in details for the UI.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from di_code.agent.tool import ToolOutput, ToolResult, ToolUpdate
from di_code.ai.types import TextContent
from di_code.system.abort import AbortSignal
from di_code.system.files.opener import read_at_most
from di_code.system.files.resolve import Target
from di_code.tools.builtin.cards import EDIT
from di_code.tools.builtin.support.atomic_write import write_atomically
from di_code.tools.builtin.support.edit_text import Applied, Document, Edit, apply_edits
from di_code.tools.builtin.support.editor_files import EditorFiles
from di_code.tools.builtin.support.file_lock import file_lock, run_on_file
from di_code.tools.common.base import WorkspaceTool
from di_code.tools.common.errors import ToolError, check_aborted
from di_code.tools.common.files import existing_file, open_error, open_regular, write_error
from di_code.tools.common.workspace import Workspace

EDIT_MAX_BYTES = 64 * 1024 * 1024
"""A larger file is not read whole to edit it (nor to preview the edit): use bash."""


@dataclass(frozen=True, slots=True)
class EditTool(WorkspaceTool):
    name: ClassVar[str] = EDIT.name
    description: ClassVar[str] = EDIT.description
    parameters: ClassVar[dict[str, Any]] = EDIT.parameters
    editor: EditorFiles | None = None
    """Where the text is read and written instead of the disk: the user's editor."""

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        edits = edits_of(params)
        target, shown = self.workspace.resolve(params["path"])
        if self.editor is not None:
            with target:  # the editor is not asked for a FIFO or a device either
                existing_file(target, shown)
            diff = await _edit_in_editor(self.editor, target.path, shown, edits, signal)
        else:
            diff = await run_on_file(
                target, lambda found: _edit_file(found, shown, edits, signal), serialize=True
            )
        plural = "s" if len(edits) > 1 else ""
        return ToolResult(
            [TextContent(f"Successfully applied {len(edits)} edit{plural} to {shown}")],
            {"diff": diff, "path": shown},
        )


def edits_of(params: dict[str, Any]) -> list[Edit]:
    """The edits list, from `edits` or from a single old_text/new_text pair."""
    single = "old_text" in params or "new_text" in params
    if "edits" in params and single:
        raise ToolError("Give either edits or old_text/new_text, not both")
    if "edits" in params:
        every = params.get("replace_all", False)  # beside `edits`: for each that does not say
        return [_edit(e, every) for e in params["edits"]]
    if "old_text" not in params or "new_text" not in params:
        raise ToolError("Give edits, or both old_text and new_text")
    return [_edit(params, False)]


def _edit(given: dict[str, Any], every: bool) -> Edit:
    return Edit(given["old_text"], given["new_text"], bool(given.get("replace_all", every)))


def preview_diff(workspace: Workspace, params: dict[str, Any]) -> str:
    """The diff the edit would make, at the file's real line numbers, without writing it
    (what an approval question shows); ToolError when the edit would fail."""
    target, shown = workspace.resolve(str(params.get("path", "")))
    try:
        _, applied, _ = _planned(target, shown, edits_of(params))
    finally:
        target.close()
    return applied.diff(shown)


def _planned(
    target: Target, shown: str, edits: list[Edit], signal: AbortSignal | None = None
) -> tuple[Document, Applied, os.stat_result]:
    """The file as it is, the text after the edits, and the file's status (to keep its mode)."""
    with open_regular(target, shown) as f:
        try:
            raw = read_at_most(f, EDIT_MAX_BYTES)
        except OSError as exc:
            raise open_error(exc, shown) from exc
        status = os.fstat(f.fileno())
    try:
        doc = Document.parse(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ToolError(f"Cannot edit {shown}: it is not UTF-8 text") from None
    return doc, apply_edits(doc, edits, shown, signal), status


async def _edit_in_editor(
    editor: EditorFiles, path: Path, shown: str, edits: list[Edit], signal: AbortSignal
) -> str:
    async with file_lock(path):
        try:
            doc = Document.parse(await editor.read_text(path))
        except OSError as exc:
            raise open_error(exc, shown) from exc
        applied = await asyncio.to_thread(apply_edits, doc, edits, shown, signal)  # off the loop
        try:
            await editor.write_text(path, doc.render(applied.after))
        except OSError as exc:
            raise write_error(exc, shown) from exc
    return await asyncio.to_thread(applied.diff, shown)


def _edit_file(target: Target, shown: str, edits: list[Edit], signal: AbortSignal) -> str:
    doc, applied, status = _planned(target, shown, edits, signal)
    check_aborted(signal)  # stopped while the edits were worked out: nothing is written
    try:
        write_atomically(target, doc.render(applied.after).encode("utf-8"), status)
    except OSError as exc:
        raise write_error(exc, shown) from exc
    return applied.diff(shown)
