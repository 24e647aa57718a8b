"""The one writer of `git fast-import` streams, for the session's snapshots and batch's patches.

Blobs go in as counted data (`data N`), never as a path for git to open, so a link swapped in
is never followed (the caller reads the bytes through the file opener). The stream is a
temporary file, so a file's bytes are copied in as they are read, not held. Each blob's name is
computed by the caller from the bytes it wrote; git's names for the blobs (`get-mark`) are
checked against them.

A snapshot in which a few files changed has git make its tree in the same process (`TreeEdit`):
the last snapshot's tree with those files put in, as a commit that names it and is then
dropped (`reset`, no ref written). `write-tree` instead reads and writes the whole private
index (4 MB at 50,000 files), and is one git process more. Paths in it are quoted (C-style,
every byte outside printable ASCII escaped), so a name with `\\n` or a quote is that name.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
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

    def write(
        self,
        fast_import: Callable[[BinaryIO], bytes],
        wanted: set[str],
        edit: TreeEdit | None = None,
    ) -> None:
        """Hand the stream to `fast_import` (`git fast-import --done` of it: its output) when
        a blob named in `wanted` is in it, or a tree is to be made (`edit`, whose `tree` is
        then set); GitError when git names the blobs otherwise."""
        marks = [(mark, name) for mark, name in enumerate(self._names, 1) if name in wanted]
        if not marks and (edit is None or not edit.puts):
            return
        self._file.seek(self._end)
        self._file.truncate()
        self._file.write(b"".join(b"get-mark :%d\n" % mark for mark, _ in marks))
        self._file.write((edit.commands() if edit is not None else b"") + b"done\n")
        self._file.seek(0)
        written = fast_import(self._file).decode().split("\n")
        if written[: len(marks)] != [name for _, name in marks]:
            raise GitError("git fast-import named the blobs otherwise than their bytes")
        if edit is not None and edit.puts:
            edit.read_tree(written[len(marks)])


Indexed = dict[bytes, tuple[str, str]]
"""Paths (as git names them) and the mode and blob the private index holds for each."""


class TreeEdit:
    """The tree `base` with the files `put` in place of theirs, made by fast-import; its name
    is `tree` once the stream was written (`base` when nothing put differs from what `indexed`
    says the tree holds: no process, no object). The commit that makes it points at it from
    no ref (`reset`): with no parent, a fixed author and time, one tree makes one commit."""

    SCRATCH = b"refs/di-code/tree-edit"
    """The branch fast-import builds on: never written (an existing ref of that name stays;
    no home's refs are named so: theirs are under 12 hex digits)."""

    def __init__(self, base: str, indexed: Indexed) -> None:
        self.base = base
        self.indexed = indexed
        self.puts: list[tuple[str, str, bytes]] = []
        """(mode, blob, path) of each file whose mode or blob is not the tree's."""
        self.tree = base

    def put(self, mode: str, blob: str, path: bytes) -> None:
        """Put a file in (its folders are in `base`), unless the tree holds it so already."""
        if self.indexed.get(path) != (mode, blob):
            self.puts.append((mode, blob, path))

    def commands(self) -> bytes:
        """The stream's part that makes the tree and names it (none when nothing is put in)."""
        if not self.puts:
            return b""
        files = b"".join(
            b"M %s %s %s\n" % (m.encode(), b.encode(), _quoted(p)) for m, b, p in self.puts
        )
        return (
            b"commit %s\ncommitter di-code <di-code> 0 +0000\ndata 0\n" % self.SCRATCH
            + b'M 040000 %s ""\n' % self.base.encode()
            + files
            + b'ls ""\n\nreset %s\n\n' % self.SCRATCH
        )

    def read_tree(self, line: str) -> None:
        """Take the tree's name from fast-import's answer to `ls` (`040000 tree <name>\\t`)."""
        found = _LISTED_TREE.fullmatch(line)
        if found is None:
            raise GitError("git fast-import did not name the snapshot's tree")
        self.tree = found[1]


_LISTED_TREE = re.compile("040000 tree ([0-9a-f]{40}|[0-9a-f]{64})\t")


def _quoted(path: bytes) -> bytes:
    """`path` as fast-import reads a quoted one: every byte but printable ASCII in octal."""
    return b'"%s"' % b"".join(_QUOTED[byte] for byte in path)


_QUOTED = [
    bytes([byte]) if 0x20 <= byte < 0x7F and byte not in b'"\\' else b"\\%03o" % byte
    for byte in range(256)
]


def fast_import(top: Path, stream: BinaryIO, stopped: Callable[[], bool] | None = None) -> bytes:
    """`git fast-import` of `stream` into the repository of `top`; its output (GitStopped
    once `stopped()` says so). A fast-import that dies once under way (a full object store,
    a tree it cannot read) writes a crash report into the user's git folder, which nothing
    else would ever remove (one per failed snapshot, naming the stream's last files): it is
    removed here, the failure staying GitError's one line."""
    try:
        return run_git(top, ["fast-import", "--quiet", "--done"], stdin=stream, stopped=stopped)
    except GitError as exc:
        reported = _CRASH_REPORT.search(exc.said)
        if reported is not None:  # as git names it: relative to `top`, or absolute
            with contextlib.suppress(OSError):
                os.unlink(top / os.fsdecode(reported[1]))
        raise


_CRASH_REPORT = re.compile(
    rb"^fast-import: dumping crash report to ((?:.*/)?fast_import_crash_[0-9]+)$", re.M
)


def blob_name(object_format: str, data: bytes) -> str:
    """The name git gives a blob of `data` (its object header, then the bytes)."""
    return hashlib.new(object_format, b"blob %d\0" % len(data) + data).hexdigest()
