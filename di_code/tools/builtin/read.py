"""The read tool: a window of a text file, or an image, without ever loading a whole file.

Choices: a file is binary when its first 8 KB contain a NUL byte; images are recognised by
their magic bytes (PNG, JPEG, GIF, WebP), not by their name, and are refused above
IMAGE_MAX_BYTES (3.75 MiB, which is 5 MiB once base64-encoded, the smallest cap among the
providers). Text is decoded as UTF-8 with replacement characters, line endings are dropped, and
each line comes numbered as `cat -n` prints it (the number right-aligned in 6 columns, a tab,
the line), as Claude Code's and opencode's reads do: the number is the 1-based line that
offset, grep and lsp speak of, so the model can point at code without counting. The output
limits count the file's text, not the numbers. An empty file reads as `(empty file)`. A single
line longer than 50 KB cannot be shown whole, so the model is told how to see it with bash.
"""

from __future__ import annotations

import base64
import io
import os
import shlex
from dataclasses import dataclass
from typing import Any, BinaryIO, ClassVar, Literal

from di_code.agent.tool import ToolOutput, ToolResult, ToolUpdate
from di_code.ai.types import ImageContent, TextContent
from di_code.system.abort import AbortSignal
from di_code.system.files.opener import count_lines, read_at_most, skip_lines, status_of
from di_code.system.files.resolve import Target
from di_code.tools.builtin.cards import READ
from di_code.tools.builtin.support.editor_files import EditorFiles
from di_code.tools.builtin.support.file_lock import run_on_file
from di_code.tools.builtin.support.image_files import IMAGE_MAX_BYTES, SNIFF_BYTES, image_type
from di_code.tools.builtin.support.truncation import MAX_BYTES, Budget, Truncation, head_bytes
from di_code.tools.common.base import WorkspaceTool
from di_code.tools.common.errors import ToolError
from di_code.tools.common.files import existing_file, open_error, open_regular

INLINE_BYTES = 256 * 1024
"""A regular file up to this size is read on the event loop: handing the read to a worker
thread costs more than the read itself. A larger file (all of whose lines are
counted), or one that cannot be told small, is read in a thread, so a slow disk never stalls
the loop for long."""


@dataclass(frozen=True, slots=True)
class ReadTool(WorkspaceTool):
    name: ClassVar[str] = READ.name
    description: ClassVar[str] = READ.description
    parameters: ClassVar[dict[str, Any]] = READ.parameters
    editor: EditorFiles | None = None
    """The editor's buffers, for text (images are read from the disk)."""

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        target, shown = self.workspace.resolve(params["path"])
        offset, limit = params.get("offset"), params.get("limit")
        if self.editor is not None and not _image_on_disk(target):
            path = target.path
            with target:  # the editor is not asked for a FIFO or a device either
                existing_file(target, shown)
            try:
                text = await self.editor.read_text(path)
            except OSError as exc:
                raise open_error(exc, shown) from exc
            return _text(io.BytesIO(text.encode("utf-8")), shown, offset, limit, signal)

        def read(found: Target) -> ToolResult:
            return _read(found, shown, offset, limit, signal)

        if _small_file(target):
            with target:  # a worker thread's hand-off would cost more than the read
                return read(target)
        return await run_on_file(target, read, serialize=False)


def _image_on_disk(target: Target) -> bool:
    """Whether the file on disk is an image (False when it is absent or unreadable)."""
    try:
        with open_regular(target, target.name) as f:
            return image_type(f.read(SNIFF_BYTES)) is not None
    except (OSError, ToolError):
        return False


def _small_file(target: Target) -> bool:
    """Whether `target` is a regular file of at most INLINE_BYTES (False when unsure)."""
    try:
        status = status_of(target)
    except OSError:
        return False
    return status is not None and status.st_size <= INLINE_BYTES


def _read(
    target: Target, shown: str, offset: int | None, limit: int | None, signal: AbortSignal
) -> ToolResult:
    try:
        with open_regular(target, shown) as f:
            head = f.read(SNIFF_BYTES)
            mime = image_type(head)
            if mime is not None:
                return _image(f, shown, mime)
            if b"\0" in head:
                raise ToolError(f"Cannot read binary file: {shown}")
            f.seek(0)
            return _text(f, shown, offset, limit, signal)
    except OSError as exc:
        raise open_error(exc, shown) from exc


def _image(f: BinaryIO, shown: str, mime: str) -> ToolResult:
    size = os.fstat(f.fileno()).st_size
    if size > IMAGE_MAX_BYTES:
        raise ToolError(
            f"Image is too large: {shown} is {size} bytes (limit {IMAGE_MAX_BYTES} bytes)"
        )
    f.seek(0)
    data = base64.b64encode(read_at_most(f, IMAGE_MAX_BYTES)).decode("ascii")
    return ToolResult([TextContent(f"Read image file [{mime}]"), ImageContent(data, mime)])


@dataclass(frozen=True, slots=True)
class _Window:
    lines: list[str]
    stopped_by: Literal["eof", "limit", "lines", "bytes", "long_line"]
    inside_line: bool = False
    """Stopped inside a line too long to show (the rest of it is not a line of its own)."""


def _rest(f: BinaryIO, window: _Window, signal: AbortSignal) -> int | None:
    """The lines after the window, None when too many bytes follow to count them."""
    counted = count_lines(f, signal)
    if counted is None or not window.inside_line:
        return counted
    return max(counted - 1, 0)


def _text(
    f: BinaryIO, shown: str, offset: int | None, limit: int | None, signal: AbortSignal
) -> ToolResult:
    """The window asked for. Work is in proportion to what is shown: the lines before it are
    skipped in chunks that check `signal`, and those after it are counted only when at most
    COUNT_BYTES follow (a multi-GB log says it goes on instead)."""
    start = offset or 1
    before = skip_lines(f, start - 1, signal)
    window = _collect(f, limit)
    if not window.lines and window.stopped_by == "eof":
        if before == 0 and start == 1:
            return ToolResult([TextContent("(empty file)")])
        raise ToolError(f"Offset {start} is beyond end of file ({before} lines total)")
    last = start + len(window.lines) - 1
    text = numbered(window.lines, start)
    details: dict[str, object] | None = None
    match window.stopped_by:
        case "lines" | "bytes":
            rest = _rest(f, window, signal)
            shown_lines = len(window.lines)
            if rest is None:
                notice = (
                    f"[Showing lines {start}-{last}; the file goes on (too large to count its "
                    f"lines). Use offset={last + 1} to continue.]"
                )
                details = {"truncated": True, "truncated_by": window.stopped_by,
                           "output_lines": shown_lines}  # fmt: skip
            else:
                total = last + 1 + rest
                notice = (
                    f"[Showing lines {start}-{last} of {total}. Use offset={last + 1} to continue.]"
                )
                details = Truncation(window.stopped_by, total, shown_lines).to_dict()
        case "long_line":
            notice = _long_line_notice(start, shown)
        case "limit" if (rest := _rest(f, window, signal)) != 0:
            more = "More lines" if rest is None else f"{rest} more lines"
            notice = f"[{more} in file. Use offset={last + 1} to continue.]"
        case _:
            return ToolResult([TextContent(text)])
    return ToolResult([TextContent(f"{text}\n\n{notice}" if text else notice)], details)


def numbered(lines: list[str], first: int) -> str:
    """The lines as `cat -n` numbers them, the first being line `first` of the file."""
    return "\n".join(f"{number:>6}\t{line}" for number, line in enumerate(lines, first))


def _long_line_notice(number: int, shown: str) -> str:
    return (
        f"[Line {number} is longer than 50 KB: its first 50 KB are shown. Use bash: "
        f"sed -n '{number}p' {shlex.quote(shown)} | cut -b {MAX_BYTES + 1}-{2 * MAX_BYTES} for "
        f"the next 50 KB, or offset={number + 1} to continue.]"
    )


def _collect(f: BinaryIO, limit: int | None) -> _Window:
    """Whole lines from the current position until EOF, `limit`, or an output limit."""
    budget = Budget()
    lines: list[str] = []
    while limit is None or len(lines) < limit:
        raw = f.readline(MAX_BYTES + 1)
        if not raw:
            return _Window(lines, "eof")
        if len(raw) > MAX_BYTES and not raw.endswith(b"\n"):
            if lines:
                return _Window(lines, "bytes", inside_line=True)
            head = head_bytes(raw.decode("utf-8", "replace"), MAX_BYTES)
            return _Window([head], "long_line", inside_line=True)
        line = raw.decode("utf-8", "replace").removesuffix("\n").removesuffix("\r")
        if not budget.take(line):
            return _Window(lines, budget.exhausted_by or "bytes")
        lines.append(line)
    return _Window(lines, "limit")
