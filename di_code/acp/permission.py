"""Approvals through the editor: a call the gate would ask about becomes
`session/request_permission`, with allow once, allow always (di-code's grant) and reject."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from di_code.acp.updates import tool_kind, tool_locations, tool_title
from di_code.tools.policy.permissions import NO, YES, Approval, ApprovalRequest, Approver

ALLOW_ONCE, ALLOW_ALWAYS, REJECT = "allow_once", "allow_always", "reject_once"


def editor_approver(
    client: Any, session_id: str, current_call: Callable[[], str], workspace: Path
) -> Approver:
    """An Approver asking the ACP client; `current_call` names the tool call being decided
    (calls run one at a time, and each call's start is sent before it is decided). Its title
    and locations are the call's own (`updates`), from the validated arguments."""

    async def approve(request: ApprovalRequest) -> Approval:
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
        call = ToolCallUpdate(
            tool_call_id=current_call(),
            title=tool_title(request.tool_name, request.arguments),
            kind=tool_kind(request.tool_name),
            status="pending",
            locations=tool_locations(workspace, request.tool_name, request.arguments),
            raw_input=request.arguments,
        )
        response = await client.request_permission(
            session_id=session_id, tool_call=call, options=options
        )
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome) or outcome.option_id == REJECT:
            return NO
        if outcome.option_id == ALLOW_ALWAYS and grant is not None:
            return Approval(True, grant=grant)
        return YES

    return approve
