"""Approvals through the editor: a call the gate would ask about becomes
`session/request_permission`, with allow once, allow always (di-code's grant) and reject.

A plan presented in plan mode is sent as the editor's plan (its steps as plan entries), then
asked about with one option per build mode (the one chosen becomes the session's mode) and one
that keeps planning."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import helpers
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from di_code.acp.updates import plan_update, tool_kind, tool_locations, tool_title
from di_code.tools.policy.permissions import NO, YES, Approval, ApprovalRequest, Approver

ALLOW_ONCE, ALLOW_ALWAYS, REJECT = "allow_once", "allow_always", "reject_once"
KEEP_PLANNING = "keep_planning"
BUILD_OPTIONS: dict[str, tuple[str, Any]] = {
    "accept-edits": ("Yes, and accept edits", "allow_always"),
    "ask": ("Yes, and ask before each edit", "allow_once"),
}
"""A plan's options that approve it: the option's id is the mode it is built in."""


def editor_approver(
    client: Any, session_id: str, current_call: Callable[[], str], workspace: Path
) -> Approver:
    """An Approver asking the ACP client; `current_call` names the tool call being decided
    (calls run one at a time, and each call's start is sent before it is decided). Its title
    and locations are the call's own (`updates`), from the validated arguments."""

    async def approve(request: ApprovalRequest) -> Approval:
        if request.modes:
            return await review(request)
        options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
        grant = request.offers[0] if request.offers else None
        if grant is not None:
            options.append(
                PermissionOption(
                    option_id=ALLOW_ALWAYS,
                    name=f"Always allow {grant.label}",
                    kind="allow_always",
                )
            )
        options.append(PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"))
        outcome = await ask(request, options)
        if outcome == ALLOW_ALWAYS and grant is not None:
            return Approval(True, grant=grant)
        # only a yes that was offered allows: an id the editor made up ("reject_always") is no
        return YES if outcome == ALLOW_ONCE else NO

    async def review(request: ApprovalRequest) -> Approval:
        """The plan as the editor's plan, then the question: build it (in which mode)?"""
        from di_code.tools.builtin.plan import plan_steps

        steps = plan_steps(request.arguments)
        todos = [{"content": step, "status": "pending"} for step in steps]
        await client.session_update(session_id=session_id, update=plan_update(todos))
        options = [
            PermissionOption(option_id=mode, name=name, kind=kind)
            for mode, (name, kind) in BUILD_OPTIONS.items()
            if mode in request.modes
        ]
        options.append(
            PermissionOption(option_id=KEEP_PLANNING, name="No, keep planning", kind="reject_once")
        )
        plan = str(request.arguments.get("plan", ""))
        chosen = await ask(request, options, [helpers.tool_content(helpers.text_block(plan))])
        mode = next((mode for mode in request.modes if mode == chosen), None)
        return Approval(True, mode=mode) if mode is not None else NO

    async def ask(
        request: ApprovalRequest, options: list[PermissionOption], content: Any = None
    ) -> str | None:
        """The option the user picked (None: the question was cancelled)."""
        call = ToolCallUpdate(
            tool_call_id=current_call(),
            title=tool_title(request.tool_name, request.arguments),
            kind=tool_kind(request.tool_name),
            status="pending",
            locations=tool_locations(workspace, request.tool_name, request.arguments),
            raw_input=request.arguments,
            content=content,
        )
        response = await client.request_permission(
            session_id=session_id, tool_call=call, options=options
        )
        outcome = response.outcome
        return outcome.option_id if isinstance(outcome, AllowedOutcome) else None

    return approve
