"""The blob of each file by its stat data, kept between runs of di-code.

A snapshot hashes the raw bytes of every file (never git's filtered index copy), so without
this the first snapshot of each run would read the whole work tree again. The cache is only a
hint: a file whose stat data differs is hashed again, and a snapshot whose cached blob is gone
from the repository (pruned) starts over without it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import msgspec

Fingerprint = tuple[int, int, int, int, int]
Row = tuple[int, int, int, int, int, str]
"""A file's fingerprint, then its blob."""


class _Stored(msgspec.Struct):
    """The cache file (JSON)."""

    files: dict[str, Row] = {}
    tree: tuple[str, str] = ("", "")
    """The digest of the last snapshot's entries, and the tree written for them: an unchanged
    work tree is not written again by the next run."""


_STORED = msgspec.json.Decoder(_Stored)


class StatCache:
    def __init__(self, file: Path | None = None) -> None:
        self.file = file
        self._stored: _Stored | None = None
        self._dirty = False

    def rows(self) -> dict[str, Row]:
        """path -> its fingerprint and blob, as last hashed (read, not changed, by callers:
        a snapshot looks up every file of the tree here)."""
        return self._loaded()

    def put(self, path: str, fingerprint: Fingerprint, blob: str) -> None:
        self._loaded()[path] = (*fingerprint, blob)
        self._dirty = True

    def tree(self, digest: str) -> str | None:
        """The tree last written for entries of this digest."""
        known, tree = self._load().tree
        return tree if known == digest else None

    def put_tree(self, digest: str, tree: str) -> None:
        self._load().tree = (digest, tree)
        self._dirty = True

    def clear(self) -> None:
        self._stored, self._dirty = _Stored(), True

    def save(self) -> None:
        """Write the cache (0600) if it changed; a failure only costs time next run. A name
        that is not UTF-8 (kept in a str by surrogate escapes) is left out: JSON cannot hold
        it, and its file is only hashed again."""
        if self.file is None or not self._dirty:
            return
        stored = self._load()
        rows = {path: row for path, row in stored.files.items() if _utf8(path)}
        temp = self.file.with_name(self.file.name + ".tmp")
        with contextlib.suppress(OSError):
            self.file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(msgspec.json.encode(_Stored(rows, stored.tree)))
            os.replace(temp, self.file)
            self._dirty = False

    def _loaded(self) -> dict[str, Row]:
        return self._load().files

    def _load(self) -> _Stored:
        if self._stored is None:
            self._stored = _read(self.file) if self.file is not None else _Stored()
        return self._stored


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _read(file: Path) -> _Stored:
    """The cache; empty when the file is missing, damaged or of another shape."""
    try:
        return _STORED.decode(file.read_bytes())
    except (OSError, msgspec.DecodeError):
        return _Stored()
