"""Reading and writing files for undo without following any symlink.

Undo writes where a model (perhaps a sandboxed one) may have planted symlinks: a folder swapped
for a link to `~/.ssh` must not receive a restored `authorized_keys`. Every path here is real
(no symlink in it when it was recorded), so each component is opened with `O_NOFOLLOW`
relative to the folder opened before it; a component that has become a symlink fails with
OSError instead of being followed. Files are written to a temporary name in their folder and
renamed over the old one, so a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

_FOLDER = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SEARCHABLE = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@contextlib.contextmanager
def parent_folder(path: Path, *, make: bool = False) -> Iterator[int]:
    """The open folder that holds absolute `path`, reached without following a symlink;
    missing folders are made (0700 would hide them from the user: the umask decides) when
    `make`, else FileNotFoundError."""
    fd = os.open("/", _SEARCHABLE)
    try:
        for part in path.parts[1:-1]:
            try:
                child = os.open(part, _SEARCHABLE, dir_fd=fd)
            except FileNotFoundError:
                if not make:
                    raise
                os.mkdir(part, 0o777, dir_fd=fd)
                child = os.open(part, _SEARCHABLE, dir_fd=fd)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def write_file(path: Path, data: bytes, mode: int) -> None:
    """Put `data` at `path` with permission bits `mode` (created folders as needed)."""
    with parent_folder(path, make=True) as folder:
        temp = f".{path.name}.di-code-undo"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=folder)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, 0o600, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb", closefd=False) as handle:
                handle.write(data)
            os.fchmod(fd, mode & 0o7777)
        finally:
            os.close(fd)
        _replace(folder, temp, path.name)


def write_symlink(path: Path, target: str) -> None:
    """Make `path` a symlink to `target` (the link itself, never what it points to)."""
    with parent_folder(path, make=True) as folder:
        temp = f".{path.name}.di-code-undo"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=folder)
        os.symlink(target, temp, dir_fd=folder)
        _replace(folder, temp, path.name)


def remove_file(path: Path) -> None:
    """Delete the file or symlink at `path` (a folder is refused); gone already is fine."""
    with parent_folder(path) as folder, contextlib.suppress(FileNotFoundError):
        os.unlink(path.name, dir_fd=folder)


def read_file(path: Path) -> tuple[bytes, os.stat_result]:
    """The bytes and status of the regular file at `path`, opened without following links."""
    with parent_folder(path) as folder:
        fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(path))
            with os.fdopen(fd, "rb", closefd=False) as handle:
                return handle.read(), info
        finally:
            os.close(fd)


def remove_empty_folders(path: Path, top: Path) -> None:
    """Remove the folders between `path` and `top` that are now empty (a prompt made them)."""
    folder = path.parent
    while folder != top and folder.is_relative_to(top):
        try:
            with parent_folder(folder) as parent:
                os.rmdir(folder.name, dir_fd=parent)
        except OSError:
            return
        folder = folder.parent


def _replace(folder: int, temp: str, name: str) -> None:
    try:
        os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise
