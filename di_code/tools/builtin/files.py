"""Small helpers for file tools: opening regular files only, errors as one-line messages, and
line counting by chunks.

File tools work on regular files only: a FIFO or a device would block or misbehave. The type is
checked on the opened descriptor (opened with O_NONBLOCK, so a FIFO cannot block the open),
never by a look at the path followed by an open.

Line counting reads fixed-size chunks, so skipping to line 1,000,000 or counting the lines
after a window costs time proportional to the file but constant memory. A file's lines are
its `\\n`-terminated pieces plus a last unterminated piece if there is one: "a\\nb\\n" and
"a\\nb" both have 2 lines.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, BinaryIO

from di_code.tools.builtin.errors import ToolError

if TYPE_CHECKING:
    from di_code.tools.builtin.resolve import Target

CHUNK = 1024 * 1024
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


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


def write_error(exc: OSError, shown: str) -> ToolError:
    """The message for a write that failed; the file was left as it was."""
    if isinstance(exc, PermissionError):
        return open_error(exc, shown)
    return ToolError(f"Cannot write {shown}: {exc.strerror or exc}; the file is unchanged")


def open_regular(target: Target, shown: str) -> BinaryIO:
    """The target opened for reading; ToolError unless it is a regular file."""
    if target.folder is None:
        raise ToolError(f"File not found: {shown}")
    try:
        fd = os.open(target.name, _READ_FLAGS, dir_fd=target.folder)
    except OSError as exc:
        raise open_error(exc, shown) from exc
    try:
        require_regular(os.fstat(fd), shown)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def existing_file(target: Target, shown: str) -> os.stat_result | None:
    """The status of the file a write will replace, None if there is none yet; ToolError if
    it is not a regular file. (The write never opens it: it renames a new file over it.)"""
    assert target.folder is not None
    try:
        status = os.stat(target.name, dir_fd=target.folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise open_error(exc, shown) from exc
    require_regular(status, shown)
    return status


def require_regular(status: os.stat_result, shown: str) -> None:
    if stat.S_ISDIR(status.st_mode):
        raise ToolError(f"Is a directory: {shown}")
    if not stat.S_ISREG(status.st_mode):
        raise ToolError(f"Not a regular file: {shown}")


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
