"""Replace a file's content all at once: the file is the old one or the new one, never a mix.

The new content goes to a temp file in the same folder, is flushed and fsync'ed, gets the mode
(and, where allowed, the owner) of the file it replaces, and is renamed over it. A full disk or a
file-size limit therefore fails before the old file is touched, and the temp file is removed.
A rename replaces the name, so a file hardlinked from outside the workspace is left as it was,
and a symlink swapped in at the last moment is replaced rather than followed. The folder is not
fsync'ed: a crash before it reaches the disk leaves the old file, which is one of the two states.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat

from di_code.system.files.opener import replace_whole
from di_code.system.files.resolve import Target


def write_atomically(target: Target, data: bytes, replaces: os.stat_result | None) -> None:
    """Make `data` the content of the target; `replaces` is the status of the file there now
    (None for a new file, which gets the usual 0o666 less the umask). A file we may not write
    is refused, as an open for writing would refuse it, although the rename could replace it."""
    folder = target.folder
    assert folder is not None
    if replaces is not None and not os.access(
        target.name, os.W_OK, dir_fd=folder, follow_symlinks=False
    ):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    keep = None if replaces is None else functools.partial(_keep_owner_and_mode, old=replaces)
    replace_whole(folder, target.name, data, 0o600 if replaces else 0o666, keep)


def _keep_owner_and_mode(fd: int, old: os.stat_result) -> None:
    """Owner first (a change of owner clears set-id bits), then group alone if the owner
    cannot be kept (not root), then the mode."""
    now = os.fstat(fd)
    if (now.st_uid, now.st_gid) != (old.st_uid, old.st_gid):
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except PermissionError:
            with contextlib.suppress(PermissionError):
                os.fchown(fd, -1, old.st_gid)
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
