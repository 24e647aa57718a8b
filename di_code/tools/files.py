"""Small helpers for file tools: open errors as one-line messages, and line counting by chunks.

Line counting reads fixed-size chunks, so skipping to line 1,000,000 or counting the lines
after a window costs time proportional to the file but constant memory. A file's lines are
its `\\n`-terminated pieces plus a last unterminated piece if there is one: "a\\nb\\n" and
"a\\nb" both have 2 lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from di_code.tools.errors import ToolError

CHUNK = 1024 * 1024


def open_error(exc: OSError, shown: str) -> ToolError:
    """The message for a file that cannot be opened or written."""
    match exc:
        case FileNotFoundError():
            return ToolError(f"File not found: {shown}")
        case IsADirectoryError():
            return ToolError(f"Is a directory: {shown}")
        case PermissionError():
            return ToolError(f"Permission denied: {shown}")
        case _:
            return ToolError(f"Cannot access {shown}: {exc.strerror or exc}")


def require_file(path: Path, shown: str) -> None:
    if not path.exists():
        raise ToolError(f"File not found: {shown}")
    if path.is_dir():
        raise ToolError(f"Is a directory: {shown}")


def skip_lines(f: BinaryIO, count: int) -> int:
    """Move past `count` lines from the current position; return how many there were."""
    skipped = 0
    partial = False
    while skipped < count:
        start = f.tell()
        chunk = f.read(CHUNK)
        if not chunk:
            return skipped + (1 if partial else 0)
        newlines = chunk.count(b"\n")
        if skipped + newlines >= count:
            index = -1
            for _ in range(count - skipped):
                index = chunk.index(b"\n", index + 1)
            f.seek(start + index + 1)
            return count
        skipped += newlines
        partial = not chunk.endswith(b"\n")
    return skipped


def count_lines(f: BinaryIO) -> int:
    """The lines from the current position to the end of the file."""
    return skip_lines(f, 1 << 62)
