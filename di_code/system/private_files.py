"""The one place that makes files only the user can read: sessions, prompt history, undo
backups, bash's spill files and trust records hold keys and code somebody pasted.

Files are 0600 and folders 0700 whatever the umask, and a file or folder di-code made earlier
with wider modes is narrowed when it is used again. A folder that another user owns (a spill
folder pre-created in a shared /tmp, a symlink planted there) is never used, since its owner
could read or swap what is written in it: di-code says so once on stderr and uses a fresh
private folder in the temp folder instead, for the rest of the process, and goes on working.

It lives in the lowest layer (like di_code.ai.redaction) because every layer writes such files.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import threading
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700

_replacements: dict[Path, Path] = {}
"""Folders not used → their stand-ins (or, for a private folder already checked, itself)."""
_lock = threading.Lock()


def private_folder(folder: Path, *, within: Path | None = None) -> Path:
    """`folder`, made (with its missing parents) and checked private; or, when it or a folder
    between `within` and it belongs to another user, the private stand-in used instead.
    Folders above `within` (default: `folder` itself) are neither checked nor narrowed:
    `/tmp` is shared on purpose."""
    folder = Path(os.path.abspath(folder))
    with _lock:
        if folder in _replacements:
            return _replacements[folder]
        top = Path(os.path.abspath(within)) if within is not None else None
        reason = _make_private(folder, top)
        if reason is None:
            _replacements[folder] = folder  # checked once per process: a session appends often
            return folder
        import tempfile  # only then: not at every start

        stand_in = Path(tempfile.mkdtemp(prefix="di-code-private-"))  # mkdtemp: 0700, unique
        _replacements[folder] = stand_in
    print(f"di-code: not using {folder}: {reason}; using {stand_in}", file=sys.stderr)
    return stand_in


def open_private(path: Path, flags: int) -> int:
    """A file descriptor on `path` opened with `flags` (O_CREAT added), 0600 even when an
    older file was wider; a symlink at `path` is refused rather than followed."""
    fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) & ~FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_private(path: Path, data: bytes) -> None:
    """Replace `path` whole with `data`, as a 0600 file (a reader sees the old or the new)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = open_private(temp, os.O_WRONLY | os.O_TRUNC)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _make_private(folder: Path, top: Path | None) -> str | None:
    """Create the missing folders down to `folder` as 0700 and narrow the user's own ones;
    why not, when one of them is not the user's own real folder."""
    missing = []
    current = folder
    while not os.path.lexists(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    existing = [p for p in (folder, *folder.parents) if p not in missing]
    top = top or folder
    for path in (p for p in existing if p.is_relative_to(top)):
        reason = _foreign(path)
        if reason is not None:
            return reason
    for path in reversed(missing):
        try:
            os.mkdir(path, FOLDER_MODE)
        except FileExistsError:
            reason = _foreign(path)  # made by somebody else just now
            if reason is not None:
                return reason
        os.chmod(path, FOLDER_MODE)  # mkdir's mode is cut by the umask, never widened
    return None


def _foreign(path: Path) -> str | None:
    """Why `path` may not be used (another user owns it or the link to it), or None, after
    narrowing the user's own folder to 0700."""
    try:
        link = os.lstat(path)
        info = os.stat(path)
    except OSError as exc:
        return f"cannot check {path}: {exc.strerror}"
    if link.st_uid != os.getuid() or info.st_uid != os.getuid():
        return f"another user owns {path}"
    if not stat.S_ISDIR(info.st_mode):  # the user's own mistake: an error, not a stand-in
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
    if stat.S_IMODE(info.st_mode) != FOLDER_MODE:
        os.chmod(path, FOLDER_MODE)
    return None
