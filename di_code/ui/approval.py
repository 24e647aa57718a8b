"""Approval questions in the REPL (SPEC §5, ask and accept-edits modes).

The permission gate awaits `ReplApprover.__call__`. What is at stake (the complete command,
wrapped, or the diff, or the content to write) is printed into the scrollback through
`visible()`, and the question is drawn in the prompt after it, so a control sequence in a
command cannot redraw the question.

A question is never answered by accident: keys count only once it has been on screen for
GUARD_SECONDS and only while the input line is empty. Text typed before the question (a
steering message) stays in the input; a key pressed while the user is typing goes into it.
"""

from __future__ import annotations

import asyncio
import difflib
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.text import Text

from di_code.tools.edit import preview_diff
from di_code.tools.errors import ToolError
from di_code.tools.permissions import GRANT_KEYS, NO, YES, Approval, ApprovalRequest
from di_code.tools.workspace import Workspace
from di_code.ui.safe_text import visible
from di_code.ui.tool_view import collapse, diff_text, summarize_call

PREVIEW_LINES = 12
GUARD_SECONDS = 0.3
"""How long a question is on screen before a key can answer it."""

ANSWER_KEYS = ("y", *GRANT_KEYS, "n", "t")


@dataclass(frozen=True, slots=True)
class YesNo:
    """A question that is not a tool call (trusting the project): y answers yes; n, Esc,
    Enter and Ctrl-C no. It is asked under the same guard as the approvals."""

    text: str


def edit_diff(arguments: dict[str, Any], workspace: Workspace | None = None) -> str:
    """The diff an edit would make: at the file's real line numbers when the file can be
    read, else a diff of the replacements alone."""
    if workspace is not None:
        try:
            return preview_diff(workspace, arguments)
        except (ToolError, KeyError, TypeError):
            pass
    edits = arguments.get("edits")
    if not isinstance(edits, list):
        edits = [arguments]
    lines: list[str] = []
    for edit in edits:
        if not isinstance(edit, dict):
            continue
        old = str(edit.get("old_text", "")).splitlines()
        new = str(edit.get("new_text", "")).splitlines()
        lines.extend(difflib.unified_diff(old, new, lineterm="", n=1))
    return "\n".join(lines)


def approval_view(request: ApprovalRequest, workspace: Workspace | None = None) -> Text:
    """What the user approves: the complete command, or the path and the diff or content."""
    args = request.arguments
    view = Text.assemble(("? ", "bold yellow"), (request.tool_name, "bold"), " ")
    if request.tool_name == "bash":
        view.append(f"$ {visible(str(args.get('command', '')))}")
        return view
    view.append(visible(summarize_call(request.tool_name, args)))
    body = approval_body(request, workspace)
    if body is not None:
        view.append("\n")
        view.append_text(body)
    return view


def approval_body(request: ApprovalRequest, workspace: Workspace | None = None) -> Text | None:
    """What an edit or a write would change, shown under the question's first line in chat
    and in `run`: the diff, or the content to write."""
    args = request.arguments
    if request.tool_name == "edit":
        return diff_text(visible(edit_diff(args, workspace)))
    if request.tool_name == "write":
        content = visible(str(args.get("content", ""))).splitlines()
        return collapse(content or ["(empty file)"], PREVIEW_LINES, "green")
    return None


def question(request: ApprovalRequest) -> str:
    """The question line: the choices this request has."""
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

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.console.print(approval_view(request, self.workspace))
        if request.tool_name == "edit":
            self.previewed.append(request.arguments)
        answer = await self._wait(request)
        self.console.print(outcome(answer))
        return answer

    async def confirm(self, question: YesNo) -> bool:
        """Ask a yes/no question; no unless the user presses y."""
        self.console.print(Text.assemble(("? ", "bold yellow"), visible(question.text)))
        answer = await self._wait(question)
        self.console.print(Text("  yes" if answer.allow else "  no", style="dim"))
        return answer.allow

    async def _wait(self, question: ApprovalRequest | YesNo) -> Approval:
        """Open the question in the prompt and wait for the key that answers it."""
        self._answer = asyncio.get_running_loop().create_future()
        self.pending = question
        self.invalidate()
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
        if self.telling:
            return "Tell the model what to do instead (Enter sends, Esc goes back):"
        if typed:
            return "Allow? (Enter sends your message, or clear the line to answer)"
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
        """An answer key: y, a or e (a grant offered), n, or t (then type the instead); a
        yes/no question takes y and n only."""
        request = self.pending
        if request is None:
            return
        if isinstance(request, YesNo):
            if key in ("y", "n"):
                self.answer(YES if key == "y" else NO)
        elif key == "t":
            self.telling = True
            self.invalidate()
        elif key in GRANT_KEYS:
            offer = request.offer_keys().get(key)
            if offer is not None:
                self.answer(Approval(True, offer))
        else:
            self.answer(YES if key == "y" else NO)

    def answer(self, answer: Approval) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(answer)
