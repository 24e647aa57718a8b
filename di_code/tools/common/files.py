"""The file tools' side of the file opener (di_code.system.files): its refusals and failures as
one-line ToolErrors for the model.

File tools work on regular files only: a FIFO or a device would block or misbehave. The opener
opens with O_NONBLOCK and judges the type on the opened descriptor.
"""

from __future__ import annotations

import os
from typing import BinaryIO

from di_code.system.files.opener import FileTooLarge, NotRegularFile, open_target, status_of
from di_code.system.files.resolve import Target
from di_code.tools.common.errors import ToolError


def open_error(exc: OSError, shown: str) -> ToolError:
    """The message for a file that cannot be opened or written."""
    match exc:
        case FileNotFoundError():
            return ToolError(f"File not found: {shown}")
        case IsADirectoryError():
            return ToolError(f"Is a directory: {shown}")
        case NotRegularFile():
            return ToolError(f"Not a regular file: {shown}")
        case FileTooLarge():
            return ToolError(f"{shown} holds {exc.size} bytes: too many to read whole")
        case PermissionError():
            return ToolError(f"Permission denied: {shown}")
        case _:
            return ToolError(f"Cannot access {shown}: {exc.strerror or exc}")


def write_error(exc: OSError, shown: str) -> ToolError:
    """The message for a write that failed; the file was left as it was."""
    if isinstance(exc, PermissionError | NotRegularFile | IsADirectoryError):
        return open_error(exc, shown)
    return ToolError(f"Cannot write {shown}: {exc.strerror or exc}; the file is unchanged")


def open_regular(target: Target, shown: str) -> BinaryIO:
    """The target opened for reading; ToolError unless it is a regular file."""
    try:
        return open_target(target)
    except OSError as exc:
        raise open_error(exc, shown) from exc


def existing_file(target: Target, shown: str) -> os.stat_result | None:
    """The status of the file a write will replace, None if there is none yet; ToolError if
    it is not a regular file. (The write never opens it: it renames a new file over it.)"""
    try:
        return status_of(target)
    except OSError as exc:
        raise open_error(exc, shown) from exc


def searchable(target: Target, shown: str) -> bool:
    """Whether the path grep, find or ls is given is a folder (True) or a regular file
    (False), judged without opening it; ToolError for a missing path, a FIFO or a device
    (a search would wait on it for ever)."""
    try:
        status = status_of(target)
    except IsADirectoryError:
        return True
    except OSError as exc:
        raise open_error(exc, shown) from exc
    if status is None:
        raise ToolError(f"Path not found: {shown}")
    return False
