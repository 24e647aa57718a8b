"""The one writer of `git fast-import` streams, for the session's snapshots and batch's patches.

Only blobs go in: counted data (`data N`), never a name or a path for git to open, so a name
with `\\n` or a trailing `\\r` is not another name, and a link swapped in is never followed
(the caller reads the bytes through the file opener). The stream is a temporary file, so a
file's bytes are copied in as they are read, not held. Each blob's name is computed by the
caller from the bytes it wrote; git's names for the blobs (`get-mark`) are checked against
them.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from di_code.session.git_run import GitError, run_git

Copy = Callable[[BinaryIO], str]
"""Writes `<size>\\n<bytes>` of one blob to the stream and returns the blob's name."""


class BlobImport:
    """A fast-import stream of blobs being written (`add`, `add_bytes`), then handed to git
    (`write`); a context manager that removes the stream."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="di-code-blobs-")  # noqa: SIM115 (__exit__)
        self._file.write(b"feature done\n")
        self._names: list[str] = []
        """Each blob's name, its mark being its place here plus one."""
        self._end = self._file.tell()
        """Where the blobs end: `write` may be called again, for other blobs of them."""

    def __enter__(self) -> BlobImport:
        return self

    def __exit__(self, *_: object) -> None:
        self._file.close()

    def add(self, copy: Copy) -> str:
        """Add one blob written by `copy`; its name. When `copy` raises, the stream is as
        before and the error goes on."""
        start = self._file.tell()
        self._file.write(b"blob\nmark :%d\ndata " % (len(self._names) + 1))
        try:
            name = copy(self._file)
        except BaseException:
            self._file.seek(start)
            self._file.truncate()
            raise
        self._file.write(b"\n")
        self._names.append(name)
        self._end = self._file.tell()
        return name

    def add_bytes(self, data: bytes, object_format: str) -> str:
        """Add a blob held in memory; its name."""

        def copy(stream: BinaryIO) -> str:
            stream.write(b"%d\n" % len(data) + data)
            return blob_name(object_format, data)

        return self.add(copy)

    def write(self, fast_import: Callable[[BinaryIO], bytes], wanted: set[str]) -> None:
        """Hand the stream to `fast_import` (`git fast-import --done` of it: its output) when
        a blob named in `wanted` is in it; GitError when git names them otherwise."""
        marks = [(mark, name) for mark, name in enumerate(self._names, 1) if name in wanted]
        if not marks:
            return
        self._file.seek(self._end)
        self._file.truncate()
        self._file.write(b"".join(b"get-mark :%d\n" % mark for mark, _ in marks) + b"done\n")
        self._file.seek(0)
        written = fast_import(self._file).decode().split()
        if written != [name for _, name in marks]:
            raise GitError("git fast-import named the blobs otherwise than their bytes")


def fast_import(top: Path, stream: BinaryIO, stopped: Callable[[], bool] | None = None) -> bytes:
    """`git fast-import` of `stream` into the repository of `top`; its output (GitStopped
    once `stopped()` says so)."""
    return run_git(top, ["fast-import", "--quiet", "--done"], stdin=stream, stopped=stopped)


def blob_name(object_format: str, data: bytes) -> str:
    """The name git gives a blob of `data` (its object header, then the bytes)."""
    return hashlib.new(object_format, b"blob %d\0" % len(data) + data).hexdigest()
