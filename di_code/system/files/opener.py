"""Opening and reading files a model names or a workspace holds, so nothing can block or grow.

- A file is opened inside a folder already held open (`dir_fd`), with O_NOFOLLOW (a symlink
  swapped in is not followed), O_NONBLOCK (a FIFO cannot block the open) and O_NOCTTY.
- Only regular files: the type is judged on the opened descriptor, never by a look at the path
  followed by an open. A folder is IsADirectoryError, anything else NotRegularFile.
- Reads are bounded (`read_at_most`) and go in chunks that check a stop signal between them
  (`chunks`), so a multi-GB file costs only what is shown and a stop ends the reading thread.
- New files are only ever created exclusively (O_EXCL), beside the one they will replace
  (`replace_whole`).

A file's lines are its `\\n`-terminated pieces plus a last unterminated piece if there is one:
"a\\nb\\n" and "a\\nb" both have 2 lines.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from di_code.system.errors import DiCodeError
from di_code.system.files.resolve import Target, resolve_path

if TYPE_CHECKING:
    from di_code.system.abort import AbortSignal  # annotations only: no asyncio in grep's worker

CHUNK = 1024 * 1024
COUNT_BYTES = 64 * 1024 * 1024
"""Lines past what a read shows are counted only when at most this many bytes follow: the
count of a multi-GB log would cost time in proportion to what is not shown."""

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_SEARCHABLE = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""A folder on the way, opened to be passed through (O_PATH), not read: a folder others may
pass but not list (a home folder of mode 711) holds files that are theirs to open."""
_STREAM = os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class NotRegularFile(DiCodeError, OSError):
    """A FIFO, a device or a socket: never read (it could block or never end)."""

    def __init__(self, name: str = "") -> None:
        super().__init__(errno.EINVAL, "Not a regular file", name)


class FileTooLarge(DiCodeError, OSError):
    """More bytes than the reader's bound."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size} bytes, over the limit of {limit}")
        self.size = size


class Stopped(DiCodeError):
    """The stop signal fired between two chunks: the read was abandoned."""


def open_in(folder: int, name: str) -> BinaryIO:
    """The regular file `name` inside the open `folder`, opened for reading."""
    fd = os.open(name, _READ, dir_fd=folder)
    try:
        require_regular(os.fstat(fd), name)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def open_target(target: Target) -> BinaryIO:
    """A resolved (confined) path's regular file, opened for reading."""
    if target.folder is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), target.name)
    return open_in(target.folder, target.name)


def open_path(path: Path) -> BinaryIO:
    """The regular file at `path` (relative to the working directory), links followed: a file
    the user or a project names, not confined as a model's paths are."""
    with resolve_path(Path(os.path.abspath(path)), lambda real: True) as target:
        return open_target(target)


def read_path(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path` (as `open_path`); FileTooLarge past `limit`."""
    with open_path(path) as f:
        return read_at_most(f, limit)


def open_real(path: Path) -> BinaryIO:
    """The regular file at the absolute real `path`, reached without following any link."""
    with parent_folder(path) as folder:
        return open_in(folder, path.name)


def status_of(target: Target) -> os.stat_result | None:
    """The status of the target (not followed), None when there is none; IsADirectoryError or
    NotRegularFile when it is not a regular file. Nothing is opened."""
    if target.folder is None:
        return None
    try:
        status = os.stat(target.name, dir_fd=target.folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    require_regular(status, target.name)
    return status


def require_regular(status: os.stat_result, name: str = "") -> None:
    if stat.S_ISDIR(status.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    if not stat.S_ISREG(status.st_mode):
        raise NotRegularFile(name)


def temp_name(name: str) -> str:
    """A fresh name beside `name` to write its new bytes to before the rename: short whatever
    `name`'s length (a name near the 255-byte limit still gets one) and unpredictable, so no
    file of the user's is ever taken for a leftover temp file."""
    return f".{name[:32]}.{secrets.token_hex(6)}.tmp"


def folder_in(folder: int, name: str) -> int:
    """The folder `name` in the open `folder`, opened without following a symlink (OSError
    when `name` is a link or no folder)."""
    return os.open(name, _SEARCHABLE, dir_fd=folder)


def create_new(folder: int, name: str, mode: int) -> int:
    """A new file `name` in `folder` for writing (FileExistsError if anything is there)."""
    return os.open(name, _CREATE, mode, dir_fd=folder)


def replace_whole(
    folder: int,
    name: str,
    data: bytes,
    mode: int = 0o666,
    prepare: Callable[[int], None] | None = None,
) -> None:
    """Make `data` the content of `name` in `folder` all at once: written to a new file beside
    it (created with `mode`, then handed to `prepare`: an owner, a mode to keep), synced and
    renamed over it. A reader sees the old file or the new one, never a mix; a full disk fails
    before the old file is touched; a link at `name` is replaced, never followed, and so is a
    hard link's name (the other names keep the old bytes). Any failure removes the new file."""
    temp = temp_name(name)
    fd = create_new(folder, temp, mode)
    try:
        try:
            if prepare is not None:
                prepare(fd)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise


def write_into_stream(path: Path, data: bytes) -> bool:
    """Write `data` into the FIFO or character device at `path`, links followed (a pipe, a
    terminal, `/dev/null`, `/dev/stdout`), and say True; False when `path` is anything else: a
    file, to be replaced (`replace_whole`). Such a name stands for a reader, not for a file:
    renaming a file over it would break the pipe or, as root, a container's `/dev/null`. Opened
    non-blocking, so a FIFO nobody reads is ENXIO, not a wait for ever; the type is judged on
    the opened descriptor (a file swapped in after the look is not written into)."""
    try:
        if not _is_stream(os.stat(path)):
            return False
        fd = os.open(path, _STREAM)
    except FileNotFoundError:
        return False
    try:
        if not _is_stream(os.fstat(fd)):
            return False
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return True


def _is_stream(status: os.stat_result) -> bool:
    return stat.S_ISFIFO(status.st_mode) or stat.S_ISCHR(status.st_mode)


@contextlib.contextmanager
def parent_folder(path: Path, *, make: bool = False) -> Iterator[int]:
    """The open folder that holds absolute `path`, reached without following a symlink;
    missing folders are made (the umask decides their mode) when `make`, else
    FileNotFoundError."""
    fd = os.open("/", _SEARCHABLE)
    try:
        for part in path.parts[1:-1]:
            try:
                child = folder_in(fd, part)
            except FileNotFoundError:
                if not make:
                    raise
                os.mkdir(part, 0o777, dir_fd=fd)
                child = folder_in(fd, part)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def chunks(f: BinaryIO, stop: AbortSignal | None = None, size: int = CHUNK) -> Iterator[bytes]:
    """The file from its position on, `size` bytes at a time; Stopped once `stop` fires."""
    while True:
        if stop is not None and stop.aborted:
            raise Stopped
        chunk = f.read(size)
        if not chunk:
            return
        yield chunk


def read_at_most(f: BinaryIO, limit: int, stop: AbortSignal | None = None) -> bytes:
    """The rest of the file; FileTooLarge if it holds more than `limit` bytes (read no
    further than one byte past the bound, whatever the file claims its size is)."""
    parts: list[bytes] = []
    taken = 0
    for chunk in chunks(f, stop, min(CHUNK, limit + 1)):
        parts.append(chunk)
        taken += len(chunk)
        if taken > limit:
            raise FileTooLarge(max(taken, _size(f)), limit)
    return b"".join(parts)


def skip_lines(f: BinaryIO, count: int, stop: AbortSignal | None = None) -> int:
    """Move past `count` lines from the current position; return how many there were."""
    if count <= 0:
        return 0
    skipped = 0
    partial = False
    start = f.tell()
    for chunk in chunks(f, stop):
        newlines = chunk.count(b"\n")
        if skipped + newlines >= count:
            index = -1
            for _ in range(count - skipped):
                index = chunk.index(b"\n", index + 1)
            f.seek(start + index + 1)
            return count
        skipped += newlines
        partial = not chunk.endswith(b"\n")
        start += len(chunk)
    return skipped + (1 if partial else 0)


def count_lines(f: BinaryIO, stop: AbortSignal | None = None) -> int | None:
    """The lines from the current position to the end, None when more than COUNT_BYTES
    follow (they are not read)."""
    if _size(f) - f.tell() > COUNT_BYTES:
        return None
    return skip_lines(f, 1 << 62, stop)


def _size(f: BinaryIO) -> int:
    """The size of a file or of text in memory (an editor's buffer), the position kept."""
    here = f.tell()
    end = f.seek(0, os.SEEK_END)
    f.seek(here)
    return end
