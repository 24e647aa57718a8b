"""The user's UserPromptSubmit and Stop hooks, with Claude Code's contract (the agent's
PromptHooks seam).

UserPromptSubmit gets `{prompt}`: exit 2 (or `{"decision": "block", "reason": ...}`) refuses
the prompt, nothing is sent and the reason is shown; exit 0 adds its stdout (or
`hookSpecificOutput.additionalContext`) to the prompt as context. Stop runs when the agent
would end its answer: exit 2 (or `{"decision": "block", "reason": ...}`) makes it go on, the
reason sent as the next user message (a few times per prompt at most). Any other exit, a
timeout or a hook that cannot start is reported to the user and changes nothing. An abort ends
a hook still running.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

from di_code.agent.prompt_hooks import PromptBlocked
from di_code.ai.types import AssistantMessage, TextContent, UserMessage
from di_code.system.abort import AbortSignal
from di_code.tools.policy.session_hooks import HookSession, hook_payload, tell_hooks
from di_code.tools.policy.user_hooks import HookRun, HookRunner, blocking, run_hook

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PromptHookRunner(HookRunner):
    """The user's UserPromptSubmit, Stop and PreCompact hooks for one workspace and session."""

    async def submitted(self, message: UserMessage, signal: AbortSignal) -> UserMessage:
        prompt = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
        runs = await self._run("UserPromptSubmit", {"prompt": prompt}, signal)
        blocks, answered = blocking(runs, self._failed)
        context = []
        for run in answered:
            if said := run.said():
                specific = said.get("hookSpecificOutput")
                added = specific.get("additionalContext") if isinstance(specific, dict) else None
                context += [str(added)] if added else []
            elif run.stdout.strip():
                context.append(run.stdout.strip())
        if blocks:
            raise PromptBlocked(f"UserPromptSubmit hook refused the prompt: {'; '.join(blocks)}")
        if not context:
            return message
        added = [TextContent(f"[UserPromptSubmit hook]\n{text}") for text in context]
        return UserMessage([*message.content, *added], message.timestamp)

    async def stopping(
        self, final: AssistantMessage, continued: bool, signal: AbortSignal
    ) -> str | None:
        runs = await self._run("Stop", {"stop_hook_active": continued}, signal)
        reasons, _ = blocking(runs, self._failed)
        return "\n".join(reasons) or None

    async def compacting(
        self,
        trigger: str,
        instructions: str,
        session: tuple[str, str],
        signal: AbortSignal | None,
    ) -> None:
        """The PreCompact hooks (di_code.tools.policy.session_hooks says their payload)."""
        fields = {"trigger": trigger, "custom_instructions": instructions}
        payload = hook_payload("PreCompact", HookSession(*session), self.workspace, **fields)
        told = tell_hooks(self.hooks, payload, self.workspace, self.hidden, self.report)
        if signal is None:
            await told
        else:
            await _until_aborted(told, signal)

    async def _run(self, event: str, fields: dict[str, Any], signal: AbortSignal) -> list[HookRun]:
        where = HookSession(self.session_id, self.transcript_path)
        payload = hook_payload(event, where, self.workspace, **fields)
        runs: list[HookRun] = []
        for hook in (h for h in self.hooks if h.event == event):
            run = await _until_aborted(run_hook(hook, payload, self.workspace, self.hidden), signal)
            if run is None:
                break
            runs.append(run)
        return runs

    def _failed(self, run: HookRun) -> None:
        self.report(f"{run.hook.event} hook {run.failure()}")


async def _until_aborted(work: Awaitable[T], signal: AbortSignal) -> T | None:
    """`work`'s result, or None when the signal aborts first (the hook is then killed)."""
    running = asyncio.ensure_future(work)
    aborted = asyncio.ensure_future(signal.wait())
    await asyncio.wait({running, aborted}, return_when=asyncio.FIRST_COMPLETED)
    aborted.cancel()
    if running.done():
        return running.result()
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    return None
