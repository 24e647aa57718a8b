"""Asking on the terminal whether a bash, write or edit call may run (`run` in ask mode).

The answer is read in a daemon thread, so an abort (Ctrl-C) never waits for Enter and the
process can exit while the question is still open.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import TextIO

from di_code.tools.permissions import Approval, ApprovalRequest, Approver

_ANSWERS: dict[str, Approval] = {"y": "yes", "yes": "yes", "a": "always", "always": "always"}


def parse_answer(text: str) -> Approval:
    """y/yes, a/always; anything else (an empty line too) is no."""
    return _ANSWERS.get(text.strip().lower(), "no")


def terminal_approver(stdin: TextIO = sys.stdin, stderr: TextIO = sys.stderr) -> Approver | None:
    """An approver that asks on stderr and reads stdin; None without a terminal to ask on."""
    if not (stdin.isatty() and stderr.isatty()):
        return None

    async def approve(request: ApprovalRequest) -> Approval:
        stderr.write(f"Allow {request.summary}? [y]es / [a]lways this session / [N]o: ")
        stderr.flush()
        return parse_answer(await _read_line(stdin))

    return approve


async def _read_line(stdin: TextIO) -> str:
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        line = stdin.readline()
        loop.call_soon_threadsafe(_settle, answer, line)

    threading.Thread(target=read, daemon=True).start()
    return await answer


def _settle(answer: asyncio.Future[str], line: str) -> None:
    if not answer.done():
        answer.set_result(line)
