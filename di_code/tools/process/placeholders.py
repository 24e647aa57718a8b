"""The mount points bubblewrap leaves in the user's folders, removed when no command needs them.

A protected path that does not exist (`.mcp.json`, `.claude`, ...) is covered by `/dev/null`
inside the sandbox so that a command cannot create it. bubblewrap needs a mount point for
that, and makes it through the writable workspace bind: an empty file of mode 0444 appears on
the host while the command runs. It must go afterwards, but not while another sandboxed
command (of this di-code or another) still has its mount on it: unlinking a mount point in
one mount namespace detaches the mounts on it in every other, which would let that command
create the path after all.

So every sandboxed command holds a shared `flock` on each writable workspace folder while it
runs; when it ends, it removes the placeholders only if it gets the lock exclusively (no other
command is running there), else the last one does. A placeholder left by a crash is an empty
mode 0444 file; it is protected like any existing file and removed the next time.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from di_code.tools.process.protected import WHY

PLACEHOLDER_MODE = 0o444


@contextlib.contextmanager
def holding(roots: Sequence[Path]) -> Iterator[None]:
    """Held while a sandboxed command runs in `roots` (taken before its mounts are chosen);
    afterwards the last command removes the placeholders in them."""
    held = [_lock(root, fcntl.LOCK_SH) for root in roots]
    try:
        yield
    finally:
        for fd in held:
            if fd is not None:
                os.close(fd)
        for root in roots:
            _remove_when_alone(root)


def is_placeholder(path: Path) -> bool:
    """An empty, mode 0444 regular file: what bubblewrap makes as a file mount point."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    mode = found.st_mode
    return stat.S_ISREG(mode) and found.st_size == 0 and stat.S_IMODE(mode) == PLACEHOLDER_MODE


def placeholder_paths(root: Path) -> list[Path]:
    """Where a placeholder may lie in `root`: its protected names."""
    return [root / name for name in WHY]


def _remove_when_alone(root: Path) -> None:
    fd = _lock(root, fcntl.LOCK_EX | fcntl.LOCK_NB)
    if fd is None:
        return  # another command still runs here: the last one cleans up
    try:
        for path in placeholder_paths(root):
            if is_placeholder(path):
                with contextlib.suppress(OSError):
                    path.unlink()
    finally:
        os.close(fd)


def _lock(root: Path, how: int) -> int | None:
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, how)
    except OSError:
        os.close(fd)
        return None
    return fd
