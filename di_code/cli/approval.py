"""Asking on the terminal whether a bash, write or edit call may run (`run` in ask mode).

The complete command (or the path, with the diff or the content to write) is written first,
with control characters shown visibly, and the question after it on a line of its own: nothing
in the command can redraw the question. The answer is read in a daemon thread, so an abort
(Ctrl-C) never waits for Enter and the process can exit while the question is still open.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import TextIO

from di_code.tools.permissions import NO, YES, Approval, ApprovalRequest, Approver

_YES = frozenset({"y", "yes"})
_NO = frozenset({"", "n", "no"})


def parse_answer(text: str, request: ApprovalRequest) -> Approval:
    """y/yes, a or e for a grant offered, n/no or an empty line; any other text is a no with
    that text passed on to the model as what to do instead."""
    typed = text.strip()
    word = typed.lower()
    if word in _YES:
        return YES
    if word in _NO:
        return NO
    offer = request.offer_keys().get(word)
    return Approval(True, offer) if offer else Approval(False, feedback=typed)


def question(request: ApprovalRequest) -> str:
    """The question, after the complete command: the choices this request has."""
    choices = ["[y]es"]
    choices += [
        f"[{key}] yes, don't ask again for {offer.label}"
        for key, offer in request.offer_keys().items()
    ]
    choices.append("[N]o")
    return f"Allow? {' / '.join(choices)}, or type what to do instead: "


def terminal_approver(stdin: TextIO = sys.stdin, stderr: TextIO = sys.stderr) -> Approver | None:
    """An approver that asks on stderr and reads stdin; None without a terminal to ask on."""
    if not (stdin.isatty() and stderr.isatty()):
        return None

    async def approve(request: ApprovalRequest) -> Approval:
        from di_code.tools.workspace import Workspace
        from di_code.ui.approval import approval_body
        from di_code.ui.safe_text import visible

        shown = visible(request.summary).replace("\n", "\n    ")
        body = approval_body(request, Workspace.create(Path.cwd()))
        details = "" if body is None else f"{body.plain}\n"
        stderr.write(f"\n? {shown}\n{details}{visible(question(request))}")
        stderr.flush()
        return parse_answer(await _read_line(stdin), request)

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
