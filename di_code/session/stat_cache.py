"""The private index of a work tree's snapshots, and what the last snapshot found, kept
between runs of di-code.

A snapshot hashes the raw bytes of every file (never git's filtered index copy). The private
index (`index_file`) holds each captured file's blob with the stat data it had, so git tells
which files changed since (`git diff-files` against it) and only those are read again. Beside
it, a small JSON file remembers the last snapshot: a digest of the paths it listed, its tree,
the index file it was taken with (its checksum) and the listed paths it did not capture (too
large, unreadable, gone), so an unchanged work tree reads no file and writes nothing. Both are
only hints: an index that cannot be read is made again, and a tree the repository no longer
holds is written again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import BinaryIO

import msgspec

from di_code.session import index_file
from di_code.system.files.opener import open_in
from di_code.system.private_files import open_private, write_private

Fingerprint = tuple[int, int, int, int, int]
"""A file's mode, size, mtime and ctime (ns) and inode."""
Outside = dict[str, tuple[str, Fingerprint | None]]
"""The listed paths a snapshot did not capture: path -> (why, its stat data then; None when it
was not a file or link)."""


LEFT_AFTER = 3600.0
"""Seconds after which a staged copy of the index whose process is gone counts as left by a
killed run: no snapshot stages for that long, so a copy still being written is never taken."""


class _Stored(msgspec.Struct):
    """The JSON file beside the index."""

    tree: tuple[str, str] = ("", "")
    """The digest of the last snapshot's listing, and its tree."""
    index: str = ""
    """The checksum of the index file that tree was taken with."""
    object_format: str = ""
    outside: Outside = {}


_STORED = msgspec.json.Decoder(_Stored)


class StatCache:
    def __init__(self, file: Path | None = None) -> None:
        """`file`: the JSON file (the index beside it, `.index`); None: kept for this process
        only, in a temporary folder."""
        if file is None:
            folder = tempfile.mkdtemp(prefix="di-code-index-")
            weakref.finalize(self, shutil.rmtree, folder, True)
            self.index = Path(folder, "index")
        else:
            self.index = file.with_suffix(".index")
        self.file = file
        self._stored: _Stored | None = None
        self._dirty = False
        self._compared: tuple[int, ...] | None = None
        self._swept = False
        """Which index file git compared the work tree with (`comparing`): another process
        may replace it meanwhile, and its entries are then not known to match the files."""

    def comparing(self) -> bool:
        """Note the index file git is about to compare the work tree with; False when there
        is none. Only that file's entries are taken later (`known`, `entries`, `patch`)."""
        try:
            info = os.lstat(self.index)
        except OSError:
            info = None
        regular = info is not None and stat.S_ISREG(info.st_mode)
        self._compared = _identity(info) if info is not None and regular else None
        return self._compared is not None

    def known(self, listing: str) -> tuple[str, Outside] | None:
        """(tree, outside) of the last snapshot when it listed `listing` and the index is
        still the one it was taken with."""
        stored = self._load()
        if stored.tree[0] != listing or not stored.index or not stored.object_format:
            return None
        if self._checksum(stored.object_format, compared=True) != stored.index:
            return None
        return stored.tree[1], stored.outside

    def object_format(self) -> str:
        """The object format of the repository the index was last written for ("": none)."""
        return self._load().object_format

    def entries(self, object_format: str) -> dict[bytes, bytes]:
        """The index's entries (path -> stat data, blob, flags); none when it is missing, was
        damaged or is of another shape."""
        try:
            with _opened(self.index) as handle:
                if _identity(os.fstat(handle.fileno())) != self._compared:
                    return {}
                return index_file.decode(handle.read(), object_format)
        except (OSError, ValueError, IndexError):
            return {}

    def write(self, entries: list[index_file.Entry], object_format: str) -> None:
        """Stage an index (0600) of `entries` (`staged`); OSError when it cannot be written."""
        self._write(index_file.encode(entries, object_format))

    def patch(self, paths: list[bytes], new: list[index_file.Entry], object_format: str) -> bool:
        """Stage the index (`staged`) with the entries of `new` in place of theirs; it holds
        those of `paths` (sorted): False (nothing written) when it does not
        (`index_file.patched`)."""
        try:
            with _opened(self.index) as handle:
                if _identity(os.fstat(handle.fileno())) != self._compared:
                    return False
                data = index_file.patched(handle.read(), object_format, paths, new)
        except OSError:
            return False
        if data is not None:
            self._write(data)
        return data is not None

    @property
    def staged(self) -> Path:
        """This process's copy of the index that `write` and `patch` wrote: git writes the
        tree from it (`write-tree` locks and rewrites the file it reads), then `remember` puts
        it in place. A lock another process (or thread) holds, or a killed git left, is never
        in its way."""
        return self.index.with_name(f"{self.index.name}.{os.getpid()}.{threading.get_ident()}.tmp")

    def _write(self, data: bytes) -> None:
        self.index.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not self._swept:
            self._swept = True
            self._remove_left_copies()
        temp = self.staged
        try:
            with os.fdopen(open_private(temp, os.O_WRONLY | os.O_TRUNC), "wb") as handle:
                handle.write(data)
        except OSError:  # a full home: a partial copy would hold the space for an hour
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        with contextlib.suppress(FileNotFoundError):  # named by this thread: a killed git's
            os.unlink(temp.with_name(temp.name + ".lock"))

    def _remove_left_copies(self) -> None:
        """Remove the staged copies (and git's locks on them) of runs killed before `remember`
        put theirs in place: each would stay for good, as large as the index."""
        prefix, now = f"{self.index.name}.", time.time()
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.index.parent):
                pid, _, rest = entry.name.removeprefix(prefix).partition(".")
                if not entry.name.startswith(prefix) or not rest.endswith((".tmp", ".tmp.lock")):
                    continue
                with contextlib.suppress(OSError, ValueError):
                    left = now - entry.stat(follow_symlinks=False).st_mtime > LEFT_AFTER
                    if left and not _running(int(pid)):
                        os.unlink(entry.path)

    def remember(self, listing: str, tree: str, object_format: str, outside: Outside) -> None:
        """The snapshot of `listing` was `tree`, whose entries the staged index holds; it now
        replaces the index (made private once more, as git's `write-tree` writes it again with
        its own mode and time, and of time 0, so git never reads a file to compare it with an
        entry: `git_run.TIMELESS`). Its checksum is read first: another run's index that
        replaces it meanwhile is never taken for this tree's. A name that is not UTF-8 cannot
        be kept in JSON: then nothing is (the next snapshot asks git)."""
        with contextlib.suppress(OSError):
            os.chmod(self.staged, 0o600)
            os.utime(self.staged, ns=(0, 0), follow_symlinks=False)  # git_run.TIMELESS
        if not all(map(_utf8, outside)):
            listing, outside = "", {}
        checksum = self._checksum(object_format, self.staged)
        try:
            os.replace(self.staged, self.index)
        except OSError:  # a folder in its place: the tree stands, the next run reads all again
            with contextlib.suppress(OSError):
                os.unlink(self.staged)
            listing = checksum = ""
        self._stored = _Stored((listing, tree), checksum, object_format, outside)
        self._dirty = True

    def clear(self) -> None:
        """Forget everything: every file is hashed again (a blob may have been pruned)."""
        with contextlib.suppress(OSError):
            self.index.unlink()
        self._stored, self._dirty = _Stored(), True

    def save(self) -> None:
        """Write the JSON file (0600) if it changed; a failure only costs time next run."""
        if self.file is None or not self._dirty:
            return
        with contextlib.suppress(OSError):
            self.file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_private(self.file, msgspec.json.encode(self._load()))
            self._dirty = False

    def _checksum(
        self, object_format: str, file: Path | None = None, *, compared: bool = False
    ) -> str:
        """The checksum the index file (or `file`) ends with, "" when it cannot be read (or,
        `compared`, when it is not the file git compared)."""
        size = hashlib.new(object_format).digest_size
        try:
            with _opened(file or self.index) as handle:
                if compared and _identity(os.fstat(handle.fileno())) != self._compared:
                    return ""
                handle.seek(-size, os.SEEK_END)
                return handle.read(size).hex()
        except OSError:
            return ""

    def _load(self) -> _Stored:
        if self._stored is None:
            self._stored = _read(self.file) if self.file is not None else _Stored()
        return self._stored


def _opened(index: Path) -> BinaryIO:
    """The index file opened for reading through the file opener: never through a link, never
    waiting (it may have been made a FIFO); OSError when it is not a regular file. The folders
    above it (di-code's home) are the user's to link."""
    folder = os.open(index.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return open_in(folder, index.name)
    finally:
        os.close(folder)


def _identity(info: os.stat_result) -> tuple[int, ...]:
    """An index file as written once: each write replaces it (a new inode, new times)."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _read(file: Path) -> _Stored:
    """The JSON file; empty when it is missing, damaged or of another shape."""
    try:
        return _STORED.decode(file.read_bytes())
    except (OSError, msgspec.DecodeError):
        return _Stored()


def _running(pid: int) -> bool:
    """Whether process `pid` exists (another user's counts: it may not be signalled)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
