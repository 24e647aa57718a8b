"""Approval questions in the REPL (README, Permissions: ask and accept-edits modes).

The permission gate awaits `ReplApprover.__call__`. What is at stake (`ui.approval_view`: the
complete command, the whole diff or content, the complete arguments) is printed into the
scrollback through `visible()`, whole or, when taller than the screen, its ends with `v` to
page through all of it; the question is drawn in the prompt after it, so a control sequence in
a command cannot redraw the question.

A question is never answered by accident: keys count only once it has been on screen for
GUARD_SECONDS and only while the input line is empty. Text typed before the question (a
steering message) stays in the input; a key pressed while the user is typing goes into it.
"""

from __future__ import annotations

import asyncio
import functools
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.text import Text

from di_code.system.own_thread import on_own_thread
from di_code.system.safe_text import visible
from di_code.tools.common.workspace import Workspace
from di_code.tools.policy.modes import PermissionMode
from di_code.tools.policy.permissions import GRANT_KEYS, NO, YES, Approval, ApprovalRequest
from di_code.ui.approval_view import (
    VIEW_KEY,
    approval_body,
    approval_header,
    fit,
    tall_command,
)
from di_code.ui.plan_view import presented_plan_panel

GUARD_SECONDS = 0.3
"""How long a question is on screen before a key can answer it."""

ANSWER_KEYS = ("y", *GRANT_KEYS, "n", "t", VIEW_KEY)
BUILD_KEYS: dict[str, PermissionMode] = {"a": "accept-edits", "y": "ask"}
"""A plan's answers that approve it, and the mode each builds it in."""
QUESTION_ROWS = 15
"""Rows kept under what is approved: its first line, the question (up to three rows), the
input line, the footer and the room the prompt keeps for its completion menu (eight)."""


@dataclass(frozen=True, slots=True)
class YesNo:
    """A question that is not a tool call (trusting the project): y answers yes; n, Esc,
    Enter and Ctrl-C no. It is asked under the same guard as the approvals."""

    text: str
    details: str = ""
    """What a yes would allow, printed before the question (it may be many lines)."""


def question(request: ApprovalRequest) -> str:
    """The question line: the choices this request has."""
    if request.modes:
        return "Build this plan? " + " · ".join(
            [
                *(f"[{key}] yes, in {mode} mode" for key, mode in BUILD_KEYS.items()),
                "[t] keep planning: tell it what to change",
                "[n] no, stop",
            ]
        )
    choices = ["[y]es"]
    choices += [
        f"[{key}] always: {visible(offer.label)}" for key, offer in request.offer_keys().items()
    ]
    choices += ["[n]o", "[t]ell it what to do instead"]
    return "Allow? " + " · ".join(choices)


def fold(line: str, width: int) -> str:
    """`line` in lines of at most `width` columns, broken between its ` · ` choices where it
    can: the prompt draws its message unwrapped, so a long question would lose its end."""
    from rich.cells import cell_len

    rows: list[str] = []
    for part in line.split(" · "):
        joined = f"{rows[-1]} · {part}" if rows else part
        if rows and cell_len(joined) <= width:
            rows[-1] = joined
        else:
            rows.extend(textwrap.wrap(part, max(width, 1)) or [""])
    return "\n".join(rows)


def outcome(answer: Approval) -> Text:
    """The line left in the scrollback once the question is answered."""
    if answer.mode is not None:
        return Text(f"  approved: building in {answer.mode} mode", style="green")
    if answer.allow:
        grant = f"; not asking again for {visible(answer.grant.label)}" if answer.grant else ""
        return Text(f"  allowed{grant}", style="green")
    said = f": {visible(answer.feedback)}" if answer.feedback else ""
    return Text(f"  denied{said}", style="red")


class ReplApprover:
    """An Approver for the permission gate; the REPL's keys call `press` and `answer`."""

    def __init__(
        self,
        console: Console,
        invalidate: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self.clock = clock
        self.invalidate = invalidate
        self.pending: ApprovalRequest | YesNo | None = None
        self.telling = False
        """The user pressed t and is typing what the model should do instead."""
        self._shown_at: float | None = None
        self._typed_at = 0.0
        self._answer: asyncio.Future[Approval] | None = None
        self.workspace: Workspace | None = None
        """Where edits are previewed from (their diff at real line numbers)."""
        self.previewed: list[dict[str, Any]] = []
        """Arguments of the edits whose diff a question showed: the result does not repeat it."""
        self.screen_rows: Callable[[], int] = lambda: console.height
        self.show_all: Callable[[Text], None] = console.print
        """Shows a view too tall for the screen in full (the REPL pages it)."""
        self.too_tall: Text | None = None
        """The whole view of the open question when only its ends are on the screen."""
        self.waiting: Callable[[ApprovalRequest | YesNo], None] = lambda question: None
        """Told when a question starts to wait (chat notifies an unfocused terminal)."""
        self.viewed = False
        """The user saw it all (`v`): `q`, as in a pager, is then no message but "back to
        the question", whether a pager ran or the view fitted the screen."""

    async def __call__(self, request: ApprovalRequest) -> Approval:
        rows = self.screen_rows() - QUESTION_ROWS
        tall = tall_command(request, self.console.width, rows)
        self.console.print(approval_header(request, command_below=tall is not None))
        # off the loop: reading the file and diffing it is work on model input (Esc stays live);
        # on a thread of its own, which Esc and quitting leave behind (a diff of millions of
        # lines takes long): asyncio.to_thread's pool is joined at exit
        body = tall
        if body is None:
            body = await on_own_thread(functools.partial(approval_body, request, self.workspace))
        if body is not None:
            shown, hidden = fit(body, rows, self.console.width)
            self.console.print(presented_plan_panel(shown) if request.modes else shown)
            self.too_tall = body if hidden else None
        if request.tool_name == "edit":
            self.previewed.append(request.arguments)
        try:
            answer = await self._wait(request)
        finally:
            self.too_tall, self.viewed = None, False
        self.console.print(outcome(answer))
        return answer

    async def confirm(self, question: YesNo) -> bool:
        """Ask a yes/no question; no unless the user presses y."""
        if question.details:
            self.console.print(Text(visible(question.details)))
        self.console.print(Text.assemble(("? ", "bold yellow"), visible(question.text)))
        answer = await self._wait(question)
        self.console.print(Text("  yes" if answer.allow else "  no", style="dim"))
        return answer.allow

    async def _wait(self, question: ApprovalRequest | YesNo) -> Approval:
        """Open the question in the prompt and wait for the key that answers it."""
        self._answer = asyncio.get_running_loop().create_future()
        self.pending = question
        self.invalidate()
        self.waiting(question)
        try:
            return await self._answer
        finally:
            self.pending = None
            self.telling = False
            self._shown_at = None
            self._answer = None
            self.invalidate()

    def prompt_line(self, typed: str) -> str:
        """The question as the prompt draws it; the first drawing starts the guard delay."""
        if self.pending is None:
            return ""
        if self._shown_at is None:
            self._shown_at = self.clock()
        if typed:
            self._typed_at = self.clock()
        if isinstance(self.pending, YesNo):  # the question itself is printed just above
            return "y/N (clear the line to answer)" if typed else "y/N (Enter: no)"
        if self.telling and self.pending.modes:
            return "Tell the model what to change in the plan (Enter sends, Esc goes back):"
        if self.telling:
            return "Tell the model what to do instead (Enter sends, Esc goes back):"
        if typed:
            asked = "Build this plan?" if self.pending.modes else "Allow?"
            return f"{asked} (Enter sends your message, or clear the line to answer)"
        if self.too_tall is not None:
            return f"{question(self.pending)} · [{VIEW_KEY}] view all"
        return question(self.pending)

    def keys_live(self, typed: str) -> bool:
        """Whether an answer key answers now: the question has been on screen, and the input
        empty, for the guard delay (the user is not typing), and no text is being asked for."""
        shown = self._shown_at
        return (
            self.pending is not None
            and not self.telling
            and not typed
            and shown is not None
            and self.clock() - max(shown, self._typed_at) >= GUARD_SECONDS
        )

    def press(self, key: str) -> None:
        """An answer key: y, a or e (a grant offered), n, t (then type the instead), or v
        (see all of a view too tall for the screen); a plan takes a or y (approve, building
        in accept-edits or ask mode), t (a remark: plan on) and n; a yes/no question takes
        y and n only."""
        request = self.pending
        if request is None:
            return
        if isinstance(request, YesNo):
            if key in ("y", "n"):
                self.answer(YES if key == "y" else NO)
        elif key == "t":
            self.telling = True
            self.invalidate()
        elif key == VIEW_KEY:
            if self.too_tall is not None:
                self.viewed = True
                self.show_all(self.too_tall)
        elif request.modes:
            if key in BUILD_KEYS:
                self.answer(Approval(True, mode=BUILD_KEYS[key]))
            elif key == "n":
                self.answer(NO)
        elif key in GRANT_KEYS:
            offer = request.offer_keys().get(key)
            if offer is not None:
                self.answer(Approval(True, offer))
        else:
            self.answer(YES if key == "y" else NO)

    def answer(self, answer: Approval) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(answer)
