"""A command's output in bounded memory: a rolling tail, and a spill file past the limits.

Everything is kept in memory until the output passes 50 KB or 2000 lines; from then on the
whole output (what came before included) goes to a temp file `di-code-bash-*.log`, and only the
last TAIL_BYTES stay in memory, enough for the 50 KB of whole lines the model is shown.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import BinaryIO

from di_code.tools.truncation import MAX_BYTES, MAX_LINES, Truncation, keep_tail

TAIL_BYTES = 2 * MAX_BYTES


@dataclass(frozen=True, slots=True)
class Snapshot:
    text: str
    truncation: Truncation | None
    first_line: int
    spill_path: str | None


class OutputBuffer:
    def __init__(self) -> None:
        self._tail = bytearray()
        self._total = 0
        self._newlines = 0
        self._spill: BinaryIO | None = None
        self.spill_path: str | None = None

    def feed(self, chunk: bytes) -> None:
        self._total += len(chunk)
        self._newlines += chunk.count(b"\n")
        if self._spill is not None:
            self._spill.write(chunk)
        self._tail += chunk
        if self._spill is None and (self._total > MAX_BYTES or self._newlines >= MAX_LINES):
            self._open_spill()
        if self._spill is not None and len(self._tail) > TAIL_BYTES:
            del self._tail[: len(self._tail) - TAIL_BYTES]

    def _open_spill(self) -> None:
        fd, self.spill_path = tempfile.mkstemp(prefix="di-code-bash-", suffix=".log")
        self._spill = os.fdopen(fd, "wb")
        self._spill.write(self._tail)

    def close(self) -> None:
        """Flush the spill file; drop it if everything fitted after all."""
        if self._spill is None:
            return
        self._spill.close()
        self._spill = None
        if self.snapshot().truncation is None and self.spill_path is not None:
            os.unlink(self.spill_path)
            self.spill_path = None

    def snapshot(self) -> Snapshot:
        """The tail as the model sees it: the last lines that fit, and where they start."""
        data = bytes(self._tail)
        if self._total > len(data):
            data = data[data.find(b"\n") + 1 :] if b"\n" in data else data
        text = data.decode("utf-8", "replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        total = self._newlines + (1 if self._tail and not self._tail.endswith(b"\n") else 0)
        kept, cut = keep_tail(lines)
        if cut is None and self._total > len(self._tail):
            cut = Truncation("bytes", total, len(kept))
        elif cut is not None:
            cut = Truncation(cut.truncated_by, total, len(kept))
        return Snapshot("\n".join(kept), cut, total - len(kept) + 1, self.spill_path)
