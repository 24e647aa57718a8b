"""A JSON text too long to hold, made short by cutting each of its strings.

rg's JSON for a match on a line of 20 MB (a minified bundle) is over 40 MB: the line, then the
match again. Such an item is read piece by piece through `StringCut`, which keeps each string's
first `keep` bytes and drops the rest, so what comes out is small, valid JSON with the same
fields: the hit is still there, its line cut (grep shows a line's start anyway).
"""

from __future__ import annotations

import re

_QUOTE_OR_ESCAPE = re.compile(rb'["\\]')


class StringCut:
    """Fed a JSON text in pieces (`feed`), `text` is that JSON with every string cut to its
    first `keep` bytes, at a character's edge and never inside an escape."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._out = bytearray()
        self._in_string = False
        self._kept = 0
        """Bytes of the current string kept; `keep` once it is cut."""
        self._pending = b""
        """The start of an escape a piece ended in, completed by the next piece."""

    @property
    def text(self) -> bytes:
        return bytes(self._out + self._pending)

    def feed(self, piece: bytes) -> None:
        piece, self._pending = self._pending + piece, b""
        at = 0
        while at < len(piece):
            if not self._in_string:
                quote = piece.find(b'"', at)
                if quote < 0:
                    self._out += piece[at:]
                    return
                self._out += piece[at : quote + 1]
                self._in_string, self._kept, at = True, 0, quote + 1
                continue
            found = _QUOTE_OR_ESCAPE.search(piece, at)
            end = len(piece) if found is None else found.start()
            self._take(piece[at:end])
            if found is None:
                return
            if piece[end] == ord('"'):
                self._out += b'"'
                self._in_string, at = False, end + 1
                continue
            size = 6 if piece[end + 1 : end + 2] == b"u" else 2
            if end + size > len(piece):  # the escape goes on in the next piece
                self._pending = piece[end:]
                return
            self._take(piece[end : end + size], whole=True)
            at = end + size

    def _take(self, content: bytes, *, whole: bool = False) -> None:
        """Keep what of `content` (a string's plain bytes, or one escape when `whole`) fits."""
        room = self.keep - self._kept
        if len(content) <= room:
            self._out += content
            self._kept += len(content)
            return
        if not whole:
            while room > 0 and content[room] & 0xC0 == 0x80:  # inside a UTF-8 character
                room -= 1
            self._out += content[:room]
        self._kept = self.keep
