"""Asking on the terminal whether a call may run (`run` in ask mode).

The complete command (or the path with the whole diff or content to write, or an MCP call's
server, tool and arguments: `ui.approval_view`) is written first, with control characters shown
visibly, and the question after it on a line of its own: nothing in the command can redraw the
question. What is taller than the terminal shows its ends, and the answer `v` pages all of it.
The answer is read in a daemon thread, so an abort (Ctrl-C) never waits for Enter and the
process can exit while the question is still open.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import threading
from pathlib import Path
from typing import TextIO

from di_code.system.own_thread import on_own_thread
from di_code.tools.policy.permissions import NO, YES, Approval, ApprovalRequest, Approver

QUESTION_ROWS = 4
"""Rows kept for the call's first line and the question under what is approved."""
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
        from di_code.system.safe_text import visible
        from di_code.tools.common.workspace import Workspace
        from di_code.ui.approval_view import VIEW_KEY, approval_body, fit, tall_command

        workspace = Workspace.create(Path.cwd())
        whole = await on_own_thread(functools.partial(approval_body, request, workspace))
        columns, lines = _terminal_size(stderr)
        shown = visible(request.summary)
        if whole is None:
            whole = tall_command(request, columns, lines - QUESTION_ROWS)
        if whole is not None and request.tool_name == "bash":
            shown = f"{request.tool_name}:"  # its lines are the body
        body, hidden = whole, 0
        if whole is not None:
            body, hidden = fit(whole, lines - QUESTION_ROWS, columns)
        details = "" if body is None else f"{body.plain}\n"
        ask = visible(question(request))
        if hidden:
            ask = f"{VIEW_KEY} shows all of it. {ask}"
        stderr.write(f"\n? {shown}\n{details}{ask}")
        stderr.flush()
        typed = await _read_line(stdin)
        while whole is not None and hidden and typed.strip().lower() == VIEW_KEY:
            from di_code.ui.pager import page

            page(f"{whole.plain}\n", stderr)
            stderr.write(ask)
            stderr.flush()
            typed = await _read_line(stdin)
        return parse_answer(typed, request)

    return approve


def _terminal_size(stream: TextIO) -> os.terminal_size:
    try:
        return os.get_terminal_size(stream.fileno())
    except OSError:
        return os.terminal_size((80, 24))


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
