"""The blob of each file by its stat data, kept between runs of di-code.

A snapshot hashes the raw bytes of every file (never git's filtered index copy), so without
this the first snapshot of each run would read the whole work tree again. The cache is only a
hint: a file whose stat data differs is hashed again, and a snapshot whose cached blob is gone
from the repository (pruned) starts over without it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

Fingerprint = tuple[int, int, int, int, int]


class StatCache:
    def __init__(self, file: Path | None = None) -> None:
        self.file = file
        self._entries: dict[str, tuple[Fingerprint, str]] | None = None
        self._dirty = False

    def get(self, path: str, fingerprint: Fingerprint) -> str | None:
        known = self._loaded().get(path)
        return known[1] if known is not None and known[0] == fingerprint else None

    def put(self, path: str, fingerprint: Fingerprint, blob: str) -> None:
        self._loaded()[path] = (fingerprint, blob)
        self._dirty = True

    def clear(self) -> None:
        self._entries, self._dirty = {}, True

    def save(self) -> None:
        """Write the cache (0600) if it changed; a failure only costs time next run."""
        if self.file is None or not self._dirty:
            return
        rows = {path: [*fp, blob] for path, (fp, blob) in self._loaded().items()}
        temp = self.file.with_name(self.file.name + ".tmp")
        with contextlib.suppress(OSError):
            self.file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(rows, handle)
            os.replace(temp, self.file)
            self._dirty = False

    def _loaded(self) -> dict[str, tuple[Fingerprint, str]]:
        if self._entries is None:
            self._entries = _read(self.file) if self.file is not None else {}
        return self._entries


def _read(file: Path) -> dict[str, tuple[Fingerprint, str]]:
    try:
        rows = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entries: dict[str, tuple[Fingerprint, str]] = {}
    if not isinstance(rows, dict):
        return entries
    for path, row in rows.items():
        valid = isinstance(row, list) and len(row) == 6 and isinstance(row[5], str)
        if valid and all(isinstance(n, int) for n in row[:5]):
            entries[path] = ((row[0], row[1], row[2], row[3], row[4]), row[5])
    return entries
