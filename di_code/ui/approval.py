"""Approval prompts in the REPL: yes, always for this session, or no (SPEC §5, ask mode).

The permission gate awaits `ReplApprover.__call__`; the question and what is at stake (the
command, the diff, the file) are printed into the scrollback, and the prompt shows the
question until the user presses y, a or n (Esc and Ctrl-C mean no).
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.text import Text

from di_code.tools.edit import preview_diff
from di_code.tools.errors import ToolError
from di_code.tools.permissions import Approval, ApprovalRequest
from di_code.tools.workspace import Workspace
from di_code.ui.tool_view import collapse, diff_text, summarize_call

PREVIEW_LINES = 12
QUESTION = "Allow? [y]es / [a]lways this session / [n]o"


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
    """What the user approves: the header line, then the diff or the content to write."""
    args = request.arguments
    view = Text.assemble(("? ", "bold yellow"), (request.tool_name, "bold"), " ")
    view.append(summarize_call(request.tool_name, args))
    if request.tool_name == "edit":
        view.append("\n")
        view.append_text(diff_text(edit_diff(args, workspace)))
    elif request.tool_name == "write":
        view.append("\n")
        content = str(args.get("content", "")).splitlines()
        view.append_text(collapse(content or ["(empty file)"], PREVIEW_LINES, "green"))
    elif request.tool_name == "bash" and "\n" in str(args.get("command", "")):
        view.append("\n")
        view.append_text(collapse(str(args["command"]).splitlines(), PREVIEW_LINES, "dim"))
    return view


ANSWER_KEYS: dict[str, Approval] = {"y": "yes", "a": "always", "n": "no"}


class ReplApprover:
    """An Approver for the permission gate; the REPL's keys call `answer`."""

    def __init__(self, console: Console, invalidate: Callable[[], None] = lambda: None) -> None:
        self.console = console
        self.invalidate = invalidate
        self.pending: ApprovalRequest | None = None
        self._answer: asyncio.Future[Approval] | None = None
        self.workspace: Workspace | None = None
        """Where edits are previewed from (their diff at real line numbers)."""
        self.previewed: list[dict[str, Any]] = []
        """Arguments of the edits whose diff a question showed: the result does not repeat it."""

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.console.print(approval_view(request, self.workspace))
        if request.tool_name == "edit":
            self.previewed.append(request.arguments)
        self._answer = asyncio.get_running_loop().create_future()
        self.pending = request
        self.invalidate()
        try:
            answer = await self._answer
        finally:
            self.pending = None
            self._answer = None
            self.invalidate()
        label = {"yes": "allowed", "always": "allowed for this session", "no": "denied"}[answer]
        self.console.print(Text(f"  {label}", style="red" if answer == "no" else "green"))
        return answer

    def answer(self, answer: Approval) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(answer)
