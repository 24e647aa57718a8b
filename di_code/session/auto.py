"""Compaction around an Agent: on demand (`/compact`), before a prompt, and after an overflow.

An overflow error that names the window (llama-server: `exceeds the available context size
(2048 tokens)`) corrects the model's window first, so the compaction that follows keeps a
tail that fits instead of finding "nothing to compact" under a 128k assumption.

The session (when there is one) records the compaction entry first; the Agent's transcript is
then replaced by the session's own context, so the two stay identical.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from msgspec.structs import replace

from di_code.agent.agent import Agent
from di_code.ai.overflow import is_context_overflow, stated_context_window
from di_code.ai.types import AssistantMessage, UserContent, UserMessage
from di_code.session.compaction import (
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_RESERVE,
    CompactionError,
    CompactionResult,
    NothingToCompact,
    compact,
    should_compact,
)
from di_code.system.abort import AbortSignal

if TYPE_CHECKING:  # a run without a session does not load them
    from di_code.session.session import Session

OnCompaction = Callable[[CompactionResult | CompactionError], None]
"""Told of each automatic compaction, or of why one failed (the prompt still runs)."""


async def compact_agent(
    agent: Agent,
    session: Session | None,
    *,
    instructions: str | None = None,
    signal: AbortSignal | None = None,
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
    trigger: str = "manual",
) -> CompactionResult:
    """Summarize the agent's older messages, record it, and replace the transcript; the
    prompt hooks are told first (PreCompact, `trigger`: "manual" or "auto").

    Raises NothingToCompact or CompactionError (one-line messages for the user). Its request
    counts against the prompt's budget (on its own, `/compact`, it is a prompt of its own)."""
    if agent.prompt_hooks is not None:
        where = (session.id, str(session.path)) if session is not None else ("", "")
        await agent.prompt_hooks.compacting(trigger, instructions or "", where, signal)
    messages = agent.transcript
    with agent.budget.prompt():
        result = await compact(
            agent.provider,
            agent.model,
            messages,
            keep_recent_tokens=keep_recent_tokens,
            instructions=instructions,
            signal=signal,
        )
    if session is None:
        agent.replace_transcript(result.messages)
        return result
    from di_code.session.format import SessionError

    pairs = session.context_with_ids()
    if [message for _, message in pairs] != messages:
        raise SessionError("the conversation and its session file differ; compaction not saved")
    first_kept = pairs[result.first_kept_index][0]
    session.append_compaction(result.summary, first_kept, result.tokens_before)
    agent.replace_transcript(session.context())
    return result


async def prompt_with_compaction(
    agent: Agent,
    prompt: str | list[UserContent] | UserMessage,
    session: Session | None,
    *,
    signal: AbortSignal | None = None,
    reserve: int = DEFAULT_RESERVE,
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
    on_compaction: OnCompaction | None = None,
) -> AssistantMessage:
    """`agent.prompt`, compacting first when the context is near full, and once more followed
    by one retry (`agent.continue_`) when the provider reports a context overflow. All of it
    is one prompt for the request budget."""

    async def run_compaction() -> bool:
        outcome: CompactionResult | CompactionError
        try:
            outcome = await compact_agent(
                agent, session, signal=signal, keep_recent_tokens=keep_recent_tokens, trigger="auto"
            )
        except NothingToCompact:
            return False
        except CompactionError as exc:
            outcome = exc
        if on_compaction is not None:
            on_compaction(outcome)
        return isinstance(outcome, CompactionResult)

    with agent.budget.prompt():
        if should_compact(agent.transcript, agent.model, reserve):
            await run_compaction()
        final = await agent.prompt(prompt, signal)
        if not is_context_overflow(final):
            return final
        stated = stated_context_window(final)
        if stated is not None and stated < agent.model.context_window:
            agent.model = replace(agent.model, context_window=stated)  # the server knows better
        if await run_compaction():
            final = await agent.continue_(signal)
        return final
