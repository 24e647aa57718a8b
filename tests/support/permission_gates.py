"""A permission gate whose questions are recorded and answered yes (the job_input rules' tests)."""

from __future__ import annotations

from di_code.tools.policy.modes import PermissionMode
from di_code.tools.policy.permissions import (
    Approval,
    ApprovalRequest,
    PermissionGate,
    PermissionRules,
)


def gate_of(mode: PermissionMode, deny: list[str], asked: list[ApprovalRequest]) -> PermissionGate:
    async def approver(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval(True)

    return PermissionGate(mode, PermissionRules.parse(deny=deny), approver)
