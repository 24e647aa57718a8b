"""A message too long to encode and write on the event loop (a 100 MB prompt) is written on a
thread of its own; what is appended meanwhile follows it in the file, in order, and a stop ends
the wait for it at once while the writing goes on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from di_code.ai import AbortController
from di_code.ai.types import UserMessage
from di_code.session import SessionStore
from di_code.session.recording import LONG_MESSAGE


def long_prompt(size: int = 3 * LONG_MESSAGE) -> UserMessage:
    return UserMessage.of("a long log line, with é\n" * (size // 24))


async def file_holds(path: Path, expected: list[str]) -> None:
    """Wait (a hang guard: 30 s) until the file holds those entries."""
    for _ in range(3000):
        try:
            if types_in_file(path) == expected:
                return
        except (OSError, ValueError):  # not written yet, or a line half written
            pass
        await asyncio.sleep(0.01)
    assert types_in_file(path) == expected


def types_in_file(path: Path) -> list[str]:
    rows = [json.loads(line) for line in path.read_bytes().splitlines()[1:]]
    return [
        row["type"] + (":" + row["message"]["role"] if "message" in row else "") for row in rows
    ]


async def test_entries_appended_during_a_long_write_follow_it_in_order(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(tmp_path)
    session.append_message(UserMessage.of("first"))
    writing = asyncio.ensure_future(session.append_long_message(long_prompt(), None))
    await asyncio.sleep(0)  # the write is under way on its thread
    session.append_checkpoint(1, "before", "files", "1")
    session.append_message(UserMessage.of("after it"))
    await writing
    await file_holds(session.path, ["message:user", "message:user", "checkpoint", "message:user"])
    again = SessionStore(tmp_path).open(session.path, tmp_path, write=False)
    texts = [str(getattr(m.content[0], "text", ""))[:5] for m in again.context()]
    assert texts == ["first", "a lon", "after"]
    assert again.warnings == []


async def test_a_stop_ends_the_wait_and_the_write_goes_on(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(tmp_path)
    controller = AbortController()
    prompt = long_prompt(60 * LONG_MESSAGE)  # seconds to encode and write
    writing = asyncio.ensure_future(session.append_long_message(prompt, controller.signal))
    await asyncio.sleep(0)
    controller.abort()
    await asyncio.wait_for(writing, 30)  # a hang guard
    written = session.path.read_bytes() if session.path.exists() else b""
    assert written.count(b"\n") <= 1  # the header at most: the message is not whole yet
    session.append_message(UserMessage.of("after the stop"))
    await file_holds(session.path, ["message:user", "message:user"])
