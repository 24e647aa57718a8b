"""A background job's output: all of it in a file on disk, its end in a bounded ring in memory.

A job may print for days (a watcher, a chatty server) or a gigabyte in a minute, so nothing
about it grows with its output but the file, and the file stops at its folder's cap (the
spill folder of bash's long outputs, `spill.py`: same place, same pruning, readable with the
read tool). In memory there is only the ring: the last RING_BYTES to twice that.

A reader keeps a cursor (bytes read so far); `read_since` gives what came after it, at most
the ring's worth, and says when more came than the ring holds (the rest is in the file).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import BinaryIO

from di_code.tools.builtin.support.spill import SpillFolder
from di_code.tools.builtin.support.truncation import MAX_BYTES

RING_BYTES = 2 * MAX_BYTES


@dataclass(frozen=True, slots=True)
class NewOutput:
    data: bytes
    """The new output, or its last RING_BYTES when more came."""
    skipped: int
    """New bytes that came before `data` and are only in the file (or lost past its cap)."""
    end: int
    """The cursor after this read: every byte the job wrote so far."""


class JobLog:
    def __init__(self, folder: SpillFolder) -> None:
        self._file: BinaryIO | None
        self._file, self.path = folder.open()
        self._room = folder.file_cap
        self.cut_at: int | None = None
        """The file holds only the first this many bytes (its cap was reached, or the disk
        was full)."""
        self._ring = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self._ring += chunk
        if len(self._ring) > 2 * RING_BYTES:
            del self._ring[:-RING_BYTES]
        if self._file is None:
            return
        kept = chunk[: self._room]
        try:
            self._file.write(kept)
        except OSError:  # a full disk: the file stops where it is, the ring goes on
            self._stop_file()
            return
        self._room -= len(kept)
        if len(kept) < len(chunk):
            self._stop_file()

    def read_since(self, cursor: int) -> NewOutput:
        """What came after `cursor`; the file is flushed, so it holds it too."""
        if self._file is not None:
            try:
                self._file.flush()
            except OSError:
                self._stop_file()
        new = self.total - cursor
        data = bytes(self._ring[-new:]) if new > 0 else b""
        return NewOutput(data, new - len(data), self.total)

    def last_lines(self, count: int) -> list[str]:
        """The output's last `count` lines (for the exit notice and /jobs)."""
        text = bytes(self._ring[-4096:]).decode("utf-8", "replace")
        return [line for line in text.splitlines() if line.strip()][-count:]

    def _stop_file(self) -> None:
        """The file grows no more (its cap, or a write the disk refused): it keeps what it
        holds, and `cut_at` says how much that is."""
        self.close(cut=True)

    def close(self, cut: bool = False) -> None:
        """Close the file; `cut`: it was stopped short. A last flush the disk refuses (the
        job's final lines, still in the file's buffer) cuts it short too, and says so."""
        if self._file is None:
            return
        try:
            self._file.flush()
        except OSError:
            cut = True
        if cut:
            self.cut_at = os.fstat(self._file.fileno()).st_size
        with contextlib.suppress(OSError):  # what a full disk did not take is lost
            self._file.close()
        self._file = None
