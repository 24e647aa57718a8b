"""Resolve a path one component at a time through open folders, so no swap can redirect it.

Resolving a path with `realpath` and then opening it by name leaves a gap: a folder swapped for
a symlink in between sends the open outside the workspace. Here every component is opened with
`O_NOFOLLOW` relative to the folder opened before it (`dir_fd`), and a symlink is read and its
target walked the same way, so the real path that is checked is the one the descriptors stand
for. The result keeps the last folder open; the file is then opened, stat'ed or replaced by
name inside that folder, again without following a symlink.

The semantics are those of `os.path.realpath` (non-strict): `..` goes to the parent of what was
resolved so far, and once a component is missing (or is not a folder) the rest is taken as
written. Only the final real path is judged, and always before anything is
opened for reading or created. (openat2 RESOLVE_BENEATH would refuse absolute symlinks that
point back inside and links between roots, which the workspace allows.)
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from pathlib import Path

import msgspec

from di_code.system.errors import DiCodeError

MAX_LINKS = 40
"""Symlinks followed for one path before giving up, as Linux does (ELOOP)."""

_FOLDER_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Outside(DiCodeError):
    """The path resolves outside every root."""


class Target(msgspec.Struct, frozen=True):
    """The last component of a resolved path: its folder held open and its name in it.

    `folder` is None when that folder does not exist. `name` was not a symlink when it was
    resolved; whoever opens it must still pass O_NOFOLLOW, since it may have been swapped."""

    folder: int | None
    name: str
    path: Path

    def close(self) -> None:
        if self.folder is not None:
            os.close(self.folder)

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Step(msgspec.Struct):
    name: str
    fd: int | None
    """None for a folder that does not exist (taken as written)."""


def resolve_path(path: Path, inside: Callable[[Path], bool], make_folders: bool = False) -> Target:
    """The target of absolute `path` with every symlink followed; raises Outside (before
    opening or creating anything past the folders) when `inside` refuses the real path, and
    OSError for a symlink loop or a folder that cannot be made. The caller closes the target."""
    stack = [_Step("", os.open("/", _FOLDER_FLAGS))]
    try:
        name = _walk(stack, path.parts[1:])
        real = Path("/", *(step.name for step in stack[1:]), name)
        if not inside(real):
            raise Outside
        if make_folders:
            _make_folders(stack)
        folder = stack.pop().fd
        return Target(folder, name or ".", real)
    finally:
        for step in stack:
            if step.fd is not None:
                os.close(step.fd)


def _walk(stack: list[_Step], parts: tuple[str, ...]) -> str:
    """Push the real folders of `parts` on `stack`; return the final name ("" for `/`)."""
    pending = list(reversed(parts))
    links = 0
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            _pop(stack)
            continue
        last = all(rest in ("", ".") for rest in pending)
        folder = stack[-1].fd
        opened = None if last or folder is None else _open_folder(name, folder)
        target = None if opened is not None or folder is None else _link(name, folder)
        if target is None:
            if last:
                return name
            stack.append(_Step(name, opened))
            continue
        links += 1
        if links > MAX_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
        if target.startswith("/"):
            while len(stack) > 1:
                _pop(stack)
        pending.extend(reversed(target.split("/")))
    if len(stack) == 1:
        return ""
    return _pop(stack)


def _link(name: str, folder: int) -> str | None:
    """The target of `name` if it is a symlink, else None."""
    try:
        return os.readlink(name, dir_fd=folder)
    except OSError:
        return None


def _open_folder(name: str, folder: int) -> int | None:
    """The folder `name` opened without following it; None if it is missing, a symlink or
    not a folder (then, as with realpath, the rest of the path is taken as written)."""
    try:
        return os.open(name, _FOLDER_FLAGS, dir_fd=folder)
    except OSError:
        return None


def _pop(stack: list[_Step]) -> str:
    """Go up one folder (never above `/`); the name left."""
    if len(stack) == 1:
        return ""
    step = stack.pop()
    if step.fd is not None:
        os.close(step.fd)
    return step.name


def _make_folders(stack: list[_Step]) -> None:
    """Create the missing folders at the end of `stack`, each inside the one opened before."""
    for index, step in enumerate(stack):
        if step.fd is not None:
            continue
        parent = stack[index - 1].fd
        assert parent is not None
        with contextlib.suppress(FileExistsError):
            os.mkdir(step.name, dir_fd=parent)
        step.fd = os.open(step.name, _FOLDER_FLAGS, dir_fd=parent)
