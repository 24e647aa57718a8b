"""Where bash keeps the full output of long commands, and how that space stays bounded.

A session's spill files live next to its file, in `<time>_<id>.bash-output/`; without a
session, in a private di-code temp folder (`$TMPDIR/di-code-<uid>/bash-output`, mode 0700).
One file holds at most FILE_CAP bytes (the rest of the output is not kept; the model still
sees the last lines). Before a file is made, its folder is pruned: files older than RETENTION
go, then the oldest until the new file fits in TOTAL_CAP; and the output folders of sessions
whose file is gone (deleted) are removed, with every file past RETENTION in any of them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

SUFFIX = ".bash-output"
FILE_CAP = 256 * 1024 * 1024
TOTAL_CAP = 512 * 1024 * 1024
RETENTION = 7 * 24 * 3600.0
SPILL_BLOCK = 256 * 1024


@dataclass(frozen=True, slots=True)
class SpillFolder:
    path: Path | None = None
    """None: the di-code temp folder."""
    session_file: Path | None = None
    """The session these files belong to; its sibling sessions' folders are pruned too."""
    file_cap: int = FILE_CAP
    total_cap: int = TOTAL_CAP
    retention: float = RETENTION
    now: float | None = field(default=None, compare=False)
    """The time pruning compares with (tests); None: the clock."""

    @classmethod
    def for_session(cls, session_file: Path) -> SpillFolder:
        return cls(session_file.with_suffix(SUFFIX), session_file)

    @property
    def folder(self) -> Path:
        """Where the files go (the folder may not exist yet)."""
        return self.path or _temp_base() / "bash-output"

    def open(self) -> tuple[BinaryIO, str]:
        """A new, empty spill file (buffered for large writes) and its path."""
        if self.path is None:
            _check_private(_temp_base())
        folder = self.folder
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._prune(folder)
        fd, path = tempfile.mkstemp(prefix="bash-", suffix=".log", dir=folder)
        return os.fdopen(fd, "wb", buffering=SPILL_BLOCK), path

    def _prune(self, folder: Path) -> None:
        now = time.time() if self.now is None else self.now
        if self.session_file is not None:
            for other in folder.parent.parent.glob(f"*/*{SUFFIX}"):
                if other != folder and not other.with_suffix(".jsonl").exists():
                    shutil.rmtree(other, ignore_errors=True)
                elif other != folder:
                    _drop_old(_files(other), now - self.retention)
        kept = _drop_old(_files(folder), now - self.retention)
        total = sum(size for _, size, _ in kept)
        for _, size, path in kept:
            if total + self.file_cap <= self.total_cap:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size


def _files(folder: Path) -> list[tuple[float, int, Path]]:
    """(mtime, size, path) of the folder's spill files, the oldest first."""
    found = []
    for path in folder.glob("bash-*.log"):
        with contextlib.suppress(OSError):
            info = path.stat()
            found.append((info.st_mtime, info.st_size, path))
    return sorted(found)


def _drop_old(files: list[tuple[float, int, Path]], cutoff: float) -> list[tuple[float, int, Path]]:
    """Remove the files last written before `cutoff`; the others are returned."""
    kept = []
    for entry in files:
        if entry[0] < cutoff:
            with contextlib.suppress(OSError):
                entry[2].unlink()
        else:
            kept.append(entry)
    return kept


def _temp_base() -> Path:
    return Path(tempfile.gettempdir()) / f"di-code-{os.getuid()}"


def _check_private(base: Path) -> None:
    """Make `base` (mode 0700); refuse it if someone else made it or can write to it."""
    base.mkdir(mode=0o700, exist_ok=True)
    info = os.lstat(base)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise OSError(f"unsafe temp folder (not a private folder of this user): {base}")
