"""A fetched page's body as it comes off the wire, its content codings undone without ever
inflating past a bound.

httpx inflates a body itself, each `Content-Encoding` layer whole per chunk, before anyone can
count it: 561 bytes of `gzip, gzip, gzip` are 10 GB after the last layer, all of it in memory
before the fetch tool's cap could look at the first byte. So fetch reads the raw bytes and
undoes the codings here, each layer with zlib's `max_length`: no layer ever makes more than
`limit` bytes, and a layer that would is where the body is cut. Only what fetch asks for
(`ACCEPTED`) is read; a body in another coding is refused by the caller.
"""

from __future__ import annotations

import zlib

from di_code.system.errors import DiCodeError

ACCEPTED = "gzip, deflate"
"""The Accept-Encoding fetch sends: the codings `Inflating` undoes."""
_WINDOW_BITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": 32 + 15}
"""zlib's window bits per coding: gzip's header; deflate's zlib header (or gzip's, which some
servers send under that name; others send deflate's data with no header: `_RAW`)."""
_RAW = -zlib.MAX_WBITS


class UnknownCoding(DiCodeError):
    """A Content-Encoding fetch did not ask for (the message names it)."""


class Inflating:
    """A body's codings (`Content-Encoding`, in the order they were applied) undone as its
    chunks come, no layer making more than `limit` bytes in all."""

    def __init__(self, content_encoding: str, limit: int) -> None:
        codings = [part.strip().lower() for part in content_encoding.split(",")]
        codings = [coding for coding in codings if coding not in ("", "identity")]
        unknown = [coding for coding in codings if coding not in _WINDOW_BITS]
        if unknown:
            raise UnknownCoding(unknown[0])
        self._codings = codings[::-1]
        self._layers = [zlib.decompressobj(_WINDOW_BITS[coding]) for coding in self._codings]
        self._made = [0] * len(self._layers)
        self._limit = limit
        self.full = False
        """Whether a layer reached the limit: the rest of the body is not read."""

    def feed(self, data: bytes) -> bytes:
        """What `data`, the next raw bytes, adds to the body; zlib.error if it is not what its
        coding says."""
        for number in range(len(self._layers)):
            room = self._limit - self._made[number]
            data = self._decompress(number, data, room) if room > 0 else b""
            self._made[number] += len(data)
            if self._layers[number].unconsumed_tail or self._made[number] >= self._limit:
                self.full = True
        return data

    def _decompress(self, number: int, data: bytes, room: int) -> bytes:
        layer = self._layers[number]
        try:
            return layer.decompress(data, room)
        except zlib.error:
            if self._codings[number] != "deflate" or self._made[number]:
                raise
            self._codings[number] = "raw deflate"  # tried once
            self._layers[number] = zlib.decompressobj(_RAW)
            return self._layers[number].decompress(data, room)
