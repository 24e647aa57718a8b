"""A language server's output read into messages: `Content-Length` headers, an empty line,
the body. Written here rather than taken from pygls's reader, which parses every body on the
event loop: megabytes of diagnostics take seconds there, and the loop (a stop with it) waits.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable
from typing import Any

from di_code.system.errors import DiCodeError
from di_code.system.own_thread import on_own_thread

MAX_FRAME = 64 * 1024 * 1024
"""Bytes a server's message may have: a larger one (announced in its header) ends the server,
said once, instead of being read into memory for as long as the server sends it."""
PARSE_ON_LOOP = 256 * 1024
"""Bytes of a message parsed on the event loop; a larger one is parsed on a thread."""
_CONTENT_LENGTH = re.compile(rb"content-length:\s*(\d+)\s*", re.IGNORECASE)


class FrameTooLarge(DiCodeError):
    """A message announced larger than MAX_FRAME."""


async def read_messages(
    output: asyncio.StreamReader,
    protocol: Any,
    stop: threading.Event,
    unreadable: Callable[[Exception], None],
) -> None:
    """Each message of `output` handed to pygls's `protocol`, in order, until the stream ends
    or `stop` is set; a body that cannot be read as a message is given to `unreadable`. What
    cannot be read on (a frame over MAX_FRAME or cut short, a header line past the reader's
    limit) is raised."""
    length = 0
    while not stop.is_set():
        line = await output.readline()
        if not line:
            return
        header = _CONTENT_LENGTH.fullmatch(line)
        if header is not None:
            length = int(header.group(1))
        if line.strip() or not length:
            continue
        if length > MAX_FRAME:
            raise FrameTooLarge(f"a message of {length} bytes, over the {MAX_FRAME} limit")
        body = await output.readexactly(length)
        length = 0
        try:
            protocol.handle_message(await _parsed(body, protocol.structure_message))
        except Exception as exc:
            unreadable(exc)


async def _parsed(body: bytes, structure: Callable[[dict[str, Any]], Any]) -> Any:
    """The message `body` holds, as pygls's types (`structure` makes them); a large one
    parsed on a thread of its own, which the loop's other work (a stop) need not wait for."""

    def parse() -> Any:
        return json.loads(body, object_hook=structure)

    return parse() if len(body) <= PARSE_ON_LOOP else await on_own_thread(parse)
