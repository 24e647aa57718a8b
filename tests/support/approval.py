"""Approval questions in a real pseudo-terminal read through a terminal emulator (pyte) that
answers cursor position requests: the screen, the guard delay after which a key answers, and the
trust question of an untrusted project."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from di_code.ui.approval import ReplApprover
from tests.support.llm_server import LLMServer
from tests.support.screen import Screen

GUARD_WAIT = 0.6
"""Longer than the approval guard delay (0.3 s): after it, a key answers."""


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
