"""The chat's question when a prompt reaches its turn limit (`run` ends there, with exit 1)."""

from __future__ import annotations

from di_code.agent.loop import MoreTurns
from di_code.ui.approval import ReplApprover, YesNo


def more_turns_question(approver: ReplApprover) -> MoreTurns:
    """Asks, when a prompt has made its `limit` model requests, whether the model goes on for
    as many again; no (the default, and Ctrl-C) ends the prompt there."""

    async def ask(limit: int) -> bool:
        question = f"The model has made {limit} requests for this prompt. Go on for {limit} more?"
        return await approver.confirm(YesNo(f"{question} y/N"))

    return ask
