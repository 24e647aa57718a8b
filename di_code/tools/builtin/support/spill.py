"""Where bash keeps the full output of long commands, and how that space stays bounded.

A session's spill files live next to its file, in `<time>_<id>.bash-output/`; without a
session, in a private di-code temp folder (`$TMPDIR/di-code-<uid>/bash-output`). Files are 0600
in 0700 folders; a folder another user made (a `di-code-<uid>` planted in a shared /tmp) is
not used: di_code.system.private_files says so once and gives a fresh private one instead.
One file holds at most FILE_CAP bytes (the rest of the output is not kept; the model still
sees the last lines). Before a file is made, its folder is pruned: files older than RETENTION
go, then the oldest until the new file fits in TOTAL_CAP; and the output folders of sessions
whose file is gone (deleted) are removed, with every file past RETENTION in any of them.

The read tool may read the files this process wrote (`written`, their real paths) and nothing
else outside the workspace: the bash result names the file, so the model can page through it.
A file in the folder that di-code did not write here, or one replaced by a link, is refused.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import BinaryIO

from msgspec import Struct, field

from di_code.system.private_files import private_folder

SUFFIX = ".bash-output"
FILE_CAP = 256 * 1024 * 1024
TOTAL_CAP = 512 * 1024 * 1024
RETENTION = 7 * 24 * 3600.0
SPILL_BLOCK = 256 * 1024


class SpillFolder(Struct, frozen=True):
    path: Path | None = None
    """None: the di-code temp folder."""
    session_file: Path | None = None
    """The session these files belong to; its sibling sessions' folders are pruned too."""
    file_cap: int = FILE_CAP
    total_cap: int = TOTAL_CAP
    retention: float = RETENTION
    now: float | None = None
    """The time pruning compares with (tests); None: the clock."""
    written: set[Path] = field(default_factory=set)
    """The real paths of the files made here by this process: the read tool may read them."""

    @classmethod
    def for_session(cls, session_file: Path) -> SpillFolder:
        return cls(session_file.with_suffix(SUFFIX), session_file)

    @property
    def folder(self) -> Path:
        """Where the files go (the folder may not exist yet)."""
        return self.path or _temp_base() / "bash-output"

    def open(self) -> tuple[BinaryIO, str]:
        """A new, empty spill file (0600, buffered for large writes) and its path."""
        wanted = self.folder
        if self.path is None:
            within = _temp_base()
        else:  # a session's: its sessions folder down (SessionStore's layout), as the session
            within = wanted.parent.parent if self.session_file is not None else wanted.parent
        folder = private_folder(wanted, within=within)
        self._prune(folder, siblings=folder == wanted)
        fd, path = tempfile.mkstemp(prefix="bash-", suffix=".log", dir=folder)  # 0600
        self.written.add(Path(os.path.realpath(path)))
        return os.fdopen(fd, "wb", buffering=SPILL_BLOCK), path

    def _prune(self, folder: Path, *, siblings: bool) -> None:
        """`siblings`: the other sessions' folders next to this one are pruned too (not
        when a stand-in folder replaced this one: its neighbours are not ours)."""
        now = time.time() if self.now is None else self.now
        if self.session_file is not None and siblings:
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
