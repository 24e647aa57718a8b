"""A command's output in bounded memory: kept in memory up to the limits, then in a spill file.

Everything is kept in memory until the output passes 50 KB or 2000 lines; from then on the
whole output (what came before included) goes to a spill file (see `spill.py` for where, and
for how their space is bounded), and a snapshot reads its last TAIL_BYTES back, enough for the
50 KB of whole lines the model is shown. A spill file stops growing at its folder's file cap;
from then on the tail is kept in memory instead (at most twice TAIL_BYTES).

Output can run to gigabytes, so a chunk costs as little as possible once spilled: it is written
to the file as it came (the file's buffer only gathers small chunks into SPILL_BLOCK writes) and
its newlines are counted. Nothing is kept, joined or decoded for the tail until a snapshot asks
for it (at most every 0.1 s while the command runs, and once at the end).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import BinaryIO

from di_code.tools.builtin.support.spill import SpillFolder
from di_code.tools.builtin.support.truncation import MAX_BYTES, MAX_LINES, Truncation, keep_tail

TAIL_BYTES = 2 * MAX_BYTES
LONG_LINE = 32
"""Average line length (bytes) from which `count_newlines` takes its memchr path."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    text: str
    truncation: Truncation | None
    first_line: int
    spill_path: str | None
    spill_cut_at: int | None = None
    """The spill file holds only the first this many bytes (its cap was reached)."""


class OutputBuffer:
    def __init__(self, folder: SpillFolder | None = None) -> None:
        self._folder = folder or SpillFolder()
        self._memory = bytearray()
        """The whole output until it spills; after `close`, the spill file's tail."""
        self._total = 0
        self._newlines = 0
        self._long_lines = False
        """The last chunk's lines averaged LONG_LINE bytes or more."""
        self._spill: BinaryIO | None = None
        self.spill_path: str | None = None
        self._room = 0
        """Bytes the spill file may still take."""
        self._late: bytearray | None = None
        """Once the spill file is full: the output's tail, TAIL_BYTES to twice that."""
        self._cut_at: int | None = None

    def feed(self, chunk: bytes) -> None:
        self._total += len(chunk)
        newlines = count_newlines(chunk, self._long_lines)
        self._newlines += newlines
        self._long_lines = newlines * LONG_LINE <= len(chunk)
        if self._spill is not None:
            self._write(chunk)
            return
        self._memory += chunk
        if self._total > MAX_BYTES or self._newlines >= MAX_LINES:
            self._spill, self.spill_path = self._folder.open()
            self._room = self._folder.file_cap
            memory, self._memory = self._memory, bytearray()
            self._write(memory)

    def _write(self, chunk: bytes | bytearray) -> None:
        """To the spill file while it has room, then to the in-memory tail."""
        assert self._spill is not None
        if self._late is None and len(chunk) <= self._room:
            self._spill.write(chunk)
            self._room -= len(chunk)
            return
        if self._late is None:
            self._spill.write(chunk[: self._room])
            self._spill.flush()
            self._cut_at = self._folder.file_cap
            start = max(0, self._cut_at - TAIL_BYTES)
            self._late = bytearray(os.pread(self._spill.fileno(), self._cut_at - start, start))
            chunk = chunk[self._room :]
            self._room = 0
        self._late += chunk
        if len(self._late) > 2 * TAIL_BYTES:
            del self._late[:-TAIL_BYTES]

    def close(self) -> None:
        """Flush the spill file, keeping its tail; drop it if everything fitted after all."""
        if self._spill is None:
            return
        self._memory = bytearray(self._tail())
        self._spill.close()
        self._spill = None
        self._late = None
        if self.snapshot().truncation is None and self.spill_path is not None:
            os.unlink(self.spill_path)
            self.spill_path = None

    def _tail(self) -> bytes:
        if self._spill is None:
            return bytes(self._memory)
        if self._late is not None:
            return bytes(self._late[-TAIL_BYTES:])
        self._spill.flush()
        start = max(0, self._total - TAIL_BYTES)
        return os.pread(self._spill.fileno(), self._total - start, start)

    def snapshot(self) -> Snapshot:
        """The tail as the model sees it: the last lines that fit, and where they start."""
        tail = self._tail()
        total = self._newlines + (1 if tail and not tail.endswith(b"\n") else 0)
        data = tail
        if self._total > len(data):
            data = data[data.find(b"\n") + 1 :] if b"\n" in data else data
        text = data.decode("utf-8", "replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        kept, cut = keep_tail(lines)
        if cut is None and self._total > len(data):
            cut = Truncation("bytes", total, len(kept))
        elif cut is not None:
            cut = Truncation(cut.truncated_by, total, len(kept))
        first = total - len(kept) + 1
        return Snapshot("\n".join(kept), cut, first, self.spill_path, self._cut_at)


def count_newlines(chunk: bytes, long_lines: bool) -> int:
    """`bytes.count` tests every byte. `replace` finds newlines with
    memchr, several times faster when lines are long and several times slower when short,
    so the caller says which it expects (from the previous chunk)."""
    if long_lines:
        return len(chunk) - len(chunk.replace(b"\n", b""))
    return chunk.count(b"\n")
