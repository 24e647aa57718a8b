"""The prompt's seam: asked when the user submits a prompt and when the agent would stop.

`submitted` may refuse the prompt (raise PromptBlocked: nothing is sent, the caller shows the
reason) or return it with more context added; `stopping` may return a reason for the agent to
go on, sent as the next user message, at most MAX_STOP_CONTINUES times per prompt so a hook
that always objects cannot keep the model busy forever; `compacting` is told before the
conversation is compacted. The user's UserPromptSubmit, Stop and PreCompact hooks
(di_code.tools.policy.prompt_user_hooks) plug in here.
"""

from __future__ import annotations

from typing import Protocol

from di_code.ai.types import AssistantMessage, UserMessage
from di_code.system.abort import AbortSignal
from di_code.system.errors import DiCodeError

MAX_STOP_CONTINUES = 3


class PromptBlocked(DiCodeError):
    """A prompt a hook refused; the message is the reason for the user."""


class PromptHooks(Protocol):
    async def submitted(self, message: UserMessage, signal: AbortSignal) -> UserMessage:
        """The message to send (the user's, perhaps with context added); raises PromptBlocked
        to send nothing."""
        ...

    async def stopping(
        self, final: AssistantMessage, continued: bool, signal: AbortSignal
    ) -> str | None:
        """None to let the agent stop; else why it must go on. `continued`: the agent is
        already going on because of an earlier answer of this hook."""
        ...

    async def compacting(
        self,
        trigger: str,
        instructions: str,
        session: tuple[str, str],
        signal: AbortSignal | None,
    ) -> None:
        """Told before the conversation is compacted: `trigger` is "manual" (asked for) or
        "auto", `session` the session's id and file ("" without one)."""
        ...
