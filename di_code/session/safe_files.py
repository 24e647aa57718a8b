"""Reading and writing files for undo without following any symlink.

Undo writes where a model (perhaps a sandboxed one) may have planted symlinks: a folder swapped
for a link to `~/.ssh` must not receive a restored `authorized_keys`. Every path here is real
(no symlink in it when it was recorded), so each component is opened with `O_NOFOLLOW`
relative to the folder opened before it; a component that has become a symlink fails with
OSError instead of being followed. Files are written to a temporary name in their folder and
renamed over the old one, so a reader never sees half a file. Files are opened through the file
opener (di_code.system.files.opener): never blocking on a FIFO, regular files only, bounded reads.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from di_code.system.files.opener import (
    open_real,
    parent_folder,
    read_at_most,
    replace_whole,
    temp_name,
)
from di_code.system.files.resolve import Outside, resolve_path


def write_file(path: Path, data: bytes, mode: int) -> None:
    """Put `data` at `path` with permission bits `mode` (created folders as needed)."""
    with parent_folder(path, make=True) as folder:
        replace_whole(folder, path.name, data, 0o600, lambda fd: os.fchmod(fd, mode & 0o7777))


def write_symlink(path: Path, target: str) -> None:
    """Make `path` a symlink to `target` (the link itself, never what it points to)."""
    with parent_folder(path, make=True) as folder:
        temp = temp_name(path.name)
        os.symlink(target, temp, dir_fd=folder)
        _replace(folder, temp, path.name)


def remove_file(path: Path) -> None:
    """Delete the file or symlink at `path` (a folder is refused); gone already is fine."""
    with parent_folder(path) as folder, contextlib.suppress(FileNotFoundError):
        os.unlink(path.name, dir_fd=folder)


def read_file(path: Path, limit: int) -> tuple[bytes, os.stat_result]:
    """The bytes and status of the regular file at `path`, opened without following links;
    the opener's FileTooLarge when it holds more than `limit` bytes."""
    with open_real(path) as handle:
        return read_at_most(handle, limit), os.fstat(handle.fileno())


def is_real(path: Path) -> bool:
    """Whether absolute `path` is its own real path: no symlink in it, the last component
    included. Only such a path is handed to anyone who follows links (an editor writing its
    buffer): a link the model planted would send the bytes where it points."""
    try:
        with resolve_path(path, lambda real: real == path):
            return True
    except (Outside, OSError):
        return False


def has_other_names(path: Path) -> bool:
    """Whether the file at `path` is hard-linked (has a name elsewhere, perhaps outside the
    workspace): whoever writes it in place (an editor saving its buffer) writes every name."""
    try:
        return path.lstat().st_nlink > 1
    except OSError:
        return False


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
