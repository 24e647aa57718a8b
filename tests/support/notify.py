"""The chat's notifications (the waiting message, focus reports) read off its raw terminal
output."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest

from tests.support.chat import TIMEOUT, spawn_chat
from tests.support.llm_server import LLMServer

FOCUS_IN, FOCUS_OUT = "\x1b[I", "\x1b[O"


WAITING = "di-code is waiting for your input"


OSC = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


class Bytes:
    """Everything the chat wrote to its terminal, read as it comes."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.seen = ""

    def wait_for(self, text: str) -> None:
        self.wait_until(lambda: text in self.seen, repr(text))

    def wait_until(self, holds: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not holds():
            if time.monotonic() > deadline:
                pytest.fail(f"never saw {what} in {self.seen[-2000:]!r}")
            self.read(0.1)

    def read(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self.seen += self.child.read_nonblocking(65536, timeout=0.05)
            except pexpect.TIMEOUT:
                continue

    def settled(self) -> None:
        """Read until a command typed now has answered: whatever the turn before it wrote
        (a notification comes as the turn ends, before the next line is read) is in."""
        before, self.seen = self.seen, ""
        self.child.sendline("/session")
        self.wait_for("Messages:")
        self.seen = before + self.seen

    def bells(self) -> int:
        """BEL characters outside OSC sequences (which may end with one)."""
        return OSC.sub("", self.seen).count("\x07")


def chat(server: LLMServer, workspace: Path, *args: str, **env: str) -> tuple[pexpect.spawn, Bytes]:
    base = {"TERM_PROGRAM": "", "TERM": "xterm-256color"}
    child = spawn_chat(server, workspace, *args, env=base | env)
    out = Bytes(child)
    out.wait_for("›")
    return child, out


def leave(child: pexpect.spawn, out: Bytes) -> None:
    child.send(FOCUS_IN)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    out.seen += child.before or ""
    child.close()
