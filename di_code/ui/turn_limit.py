"""The chat's question when a prompt reaches its turn limit (`run` ends there, with exit 1)."""

from __future__ import annotations

from di_code.agent.loop import MoreTurns
from di_code.ui.approval import ReplApprover, YesNo


def more_turns_question(approver: ReplApprover) -> MoreTurns:
    """Asks, each time a prompt has made `limit` more model requests, whether the model goes
    on for as many again; no (the default, and Ctrl-C) ends the prompt there."""

    async def ask(made: int, limit: int) -> bool:
        return await approver.confirm(YesNo(limit_question(made, limit)))

    return ask


def limit_question(made: int, limit: int) -> str:
    """The question, counting every request of the prompt (a "go on" before included)."""
    requests = "request" if made == 1 else "requests"
    return f"The model has made {made} {requests} for this prompt. Go on for {limit} more? y/N"
