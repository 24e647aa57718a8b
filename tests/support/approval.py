"""Approval questions in a real pseudo-terminal read through a terminal emulator (pyte) that
answers cursor position requests: the screen, the guard delay after which a key answers, and the
trust question of an untrusted project."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pexpect
import pyte

from di_code.ui.approval import ReplApprover
from tests.support.chat import TIMEOUT
from tests.support.llm_server import LLMServer

CPR = "\x1b[6n"
"""A cursor position request (a terminal answers `ESC [ row ; column R`)."""


GUARD_WAIT = 0.6
"""Longer than the approval guard delay (0.3 s): after it, a key answers."""


class Screen:
    """What the user sees: the child's output fed into a terminal emulator (100x30 unless
    told)."""

    def __init__(self, child: pexpect.spawn, columns: int = 100) -> None:
        self.child = child
        self.screen = pyte.Screen(columns, 30)
        self.stream = pyte.Stream(self.screen)
        self._held = ""
        """The start of a cursor position request that the last read cut off."""

    @property
    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def pump(self, seconds: float) -> None:
        """Read what the child writes for `seconds`, answering cursor position requests as a
        terminal does: once each, with the cursor where everything written before the
        request left it (prompt-toolkit makes its drawing as tall as the rows below that
        position, so a wrong answer scrolls the screen). A request cut in two by a read is
        answered once its second half arrives."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                data = self._held + self.child.read_nonblocking(65536, timeout=min(left, 0.1))
            except pexpect.TIMEOUT:
                continue
            kept = next((n for n in range(len(CPR) - 1, 0, -1) if data.endswith(CPR[:n])), 0)
            data, self._held = data[: len(data) - kept], data[len(data) - kept :]
            first, *requested = data.split(CPR)
            self.stream.feed(first)
            for part in requested:
                cursor = self.screen.cursor
                self.child.send(f"\x1b[{cursor.y + 1};{cursor.x + 1}R")
                self.stream.feed(part)

    def wait_for(self, needle: str, after: str = "") -> None:
        """Read until `needle` shows below the first `after` on the screen (anywhere, unless
        told): a screen is drawn in pieces, so what is below a line may not be there yet."""
        deadline = time.monotonic() + TIMEOUT
        while needle not in (self.text.partition(after)[2] if after else self.text):
            assert time.monotonic() < deadline, f"{needle!r} never appeared:\n{self.text}"
            self.pump(0.1)


def answer(screen: Screen, key: str) -> None:
    """Press `key` once the question is on screen and its guard delay is over."""
    screen.wait_for("[y]es")
    screen.pump(GUARD_WAIT)
    screen.child.send(key)


def last_request(server: LLMServer) -> str:
    return json.dumps(server.requests[-1].body, ensure_ascii=False)


async def opened(approver: ReplApprover) -> None:
    """Wait until the question is open (its body is prepared off the event loop)."""
    while approver.pending is None:
        await asyncio.sleep(0.01)


QUESTION = "Trust this project's settings"


def untrusted_project(workspace: Path) -> Path:
    """A repository whose settings set a key only a trusted project may set."""
    (workspace / ".git").mkdir()
    config = workspace / ".di-code" / "config.toml"
    config.parent.mkdir(mode=0o755)
    config.write_text('[permissions]\nmode = "accept-edits"\n', encoding="utf-8")
    config.chmod(0o644)
    return config
