"""Server-Sent Events decoding by the WHATWG event-stream rules, independent of any transport.

Feed it bytes as they arrive, however the network cut them (mid-line, mid-CRLF, mid-UTF-8
character); it returns the events those bytes complete. Rules followed: UTF-8 with one leading
BOM dropped; lines end in LF, CR or CRLF; `:` starts a comment; `field: value` loses one space
after the colon; `data` lines are joined with LF; `event` names the type (default `message`);
`id` sets the last event id (ignored if it contains NUL) and persists; `retry` takes digits
only; an empty line dispatches, and an event with no data is dropped.
One chosen deviation: at the end of the stream an event whose lines are complete but that lacks
the final blank line is still dispatched (some servers end that way); a partial line is not.
Decoding is linear in the input however it is cut (only new text is searched for line ends),
and one line longer than `MAX_LINE` characters is an `SSEError`, not unbounded growth.
"""

from __future__ import annotations

import codecs
import re

import msgspec

from di_code.system.errors import DiCodeError

_LINE_END = re.compile(r"\r\n|\r|\n")
MAX_LINE = 16 * 1024 * 1024


class SSEError(DiCodeError, ValueError):
    """The stream cannot be decoded within the limits (a line over `MAX_LINE`)."""


class ServerSentEvent(msgspec.Struct, frozen=True):
    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._at_start = True
        self._partial: list[str] = []
        """Pieces of the line not yet ended; joined once, when its end arrives."""
        self._partial_size = 0
        self._skip_lf = False
        """The last piece ended in CR: a LF at the start of the next is its second half."""
        self._event = ""
        self._data: list[str] = []
        self._last_id: str | None = None
        self._retry: int | None = None
        self.keepalives = 0
        """Comment lines so far: what proxies send to show a connection is alive."""

    @property
    def pending(self) -> bool:
        """Part of an event is in hand: a line not yet ended, or fields not yet dispatched."""
        return bool(self._partial or self._data or self._event)

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events completed by `chunk`."""
        return self._lines(self._utf8.decode(chunk))

    def close(self) -> list[ServerSentEvent]:
        """End of stream: a pending event with complete lines is dispatched (see module doc)."""
        events = self._lines(self._utf8.decode(b"", final=True))
        if self._data:
            events.extend(self._dispatch())
        return events

    def _lines(self, text: str) -> list[ServerSentEvent]:
        if self._at_start and text:
            self._at_start = False
            text = text.removeprefix("\ufeff")
        if self._skip_lf and text:
            self._skip_lf = False
            text = text.removeprefix("\n")
        *ended, rest = _LINE_END.split(text)
        events: list[ServerSentEvent] = []
        if ended:
            self._skip_lf = text.endswith("\r")
            ended[0] = "".join([*self._partial, ended[0]])
            self._partial, self._partial_size = [], 0
            for line in ended:
                self._check_length(len(line))
                events.extend(self._line(line))
        if rest:
            self._partial.append(rest)
            self._partial_size += len(rest)
            self._check_length(self._partial_size)
        return events

    @staticmethod
    def _check_length(size: int) -> None:
        if size > MAX_LINE:
            raise SSEError(f"an event-stream line is longer than {MAX_LINE // 2**20} MB")

    def _line(self, line: str) -> list[ServerSentEvent]:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            self.keepalives += 1
            return []
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)
        return []

    def _dispatch(self) -> list[ServerSentEvent]:
        data, event = self._data, self._event
        self._data, self._event = [], ""
        if not data:
            return []
        return [ServerSentEvent("\n".join(data), event or "message", self._last_id, self._retry)]
