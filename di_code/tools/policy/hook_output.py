"""A hook's pipes, bounded: its event written to stdin whether or not it reads it, and the first
50 KB of its stdout and of its stderr kept (the rest read and dropped, so a hook that prints
without end neither fills di-code's memory nor reaches the model whole)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from di_code.tools.builtin.support.truncation import MAX_BYTES

CHUNK = 64 * 1024
CUT_NOTE = f"\n[the hook printed more; cut at {MAX_BYTES // 1024} KB]"
LEFT_OPEN_GRACE = 0.5
"""Seconds to collect what an exited hook printed when something it left behind (a background
child) still holds its output open: the bytes in the pipe are read at once, and that child's
end is not the hook's."""


@dataclass(slots=True)
class KeptOutput:
    """What one of a hook's output streams held, up to MAX_BYTES; still there when the reading
    is stopped part way."""

    data: bytearray = field(default_factory=bytearray)
    cut: bool = False

    async def read(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(CHUNK):
            room = MAX_BYTES - len(self.data)
            self.data += chunk[:room]
            self.cut = self.cut or len(chunk) > room

    def text(self) -> str:
        text = self.data.decode("utf-8", errors="replace")
        return text + CUT_NOTE if self.cut else text


async def feed_stdin(stdin: asyncio.StreamWriter, data: bytes) -> None:
    """The event on the hook's stdin (redacted by the caller: tests/test_guarded_secrets.py
    knows this name as a writer), then its end; a hook that exits without reading it all is
    its own business (the broken pipe is no failure of di-code's)."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(data)
        await stdin.drain()
        stdin.close()


async def collected(readers: Sequence[asyncio.Future[None]]) -> None:
    """The readers of an exited hook, each to its end or LEFT_OPEN_GRACE, whichever comes first."""
    await asyncio.wait(readers, timeout=LEFT_OPEN_GRACE)
    for reader in readers:
        reader.cancel()
    await asyncio.gather(*readers, return_exceptions=True)
