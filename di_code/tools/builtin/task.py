"""The task tool: a job handed to a subagent, a fresh Agent with a context of its own.

The subagent runs in this process on the session's provider (or the model its file or
`[subagents] model` names), with the tools `Subagents.tools_for` gives it; each of its calls
passes the session's permission gate and hooks, one question at a time even when several
subagents run in parallel. Its final answer is the tool's result; `details` carry its tool
calls (streamed as they happen, for `run`'s stream-json and the chat), the usage of its
requests (counted in the session's totals) and the file its transcript is kept in. The tool's
abort signal stops it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

from di_code.agent.agent import Agent
from di_code.agent.events import (
    AgentEvent,
    MessageEndEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
)
from di_code.agent.tool import USAGE_DETAIL, ToolOutput, ToolResult, ToolUpdate
from di_code.agent.tool_call import BeforeToolCall, ToolCallContext, ToolHooks
from di_code.ai.codec import to_dict
from di_code.ai.reply_notes import usage_known
from di_code.ai.stream import Provider, close_provider
from di_code.ai.types import AssistantMessage, Model, TextContent, Usage
from di_code.system.abort import AbortSignal
from di_code.tools.builtin.cards import TASK
from di_code.tools.builtin.support.subagents import SubagentKind, Subagents
from di_code.tools.common.errors import ToolError

ARGUMENT_PREVIEW = 120


@dataclass(slots=True)
class TaskTool:
    subagents: Subagents
    _questions: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Parallel subagents ask the user one question at a time."""

    name: ClassVar[str] = TASK.name
    parameters: ClassVar[dict[str, Any]] = TASK.parameters
    parallel_safe: ClassVar[bool] = True

    @property
    def description(self) -> str:
        return self.subagents.description()

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal,
        on_update: ToolUpdate | None = None,
    ) -> ToolOutput:
        kind = self._kind(params.get("subagent_type"))
        provider, model, own_provider = self._model(kind)
        try:
            agent = self._agent(kind, provider, model)
            progress = _Progress(params, kind, model, on_update)
            agent.subscribe(progress.on_event)
            record = self.subagents.record
            if record is not None:
                progress.details["transcript"] = record(tool_call_id, agent)
            final = await agent.prompt(params["prompt"], signal)
        finally:
            if own_provider:
                await close_provider(provider)
        return progress.result(final)

    def _kind(self, name: str | None) -> SubagentKind | None:
        if not name or name in ("general", "general-purpose"):
            return None
        kind = self.subagents.kinds.get(name)
        if kind is None:
            known = ", ".join(sorted(self.subagents.kinds)) or "none"
            raise ToolError(f'No subagent "{name}" (custom subagents: {known}).')
        return kind

    def _model(self, kind: SubagentKind | None) -> tuple[Provider, Model, bool]:
        """The provider and model to use, and whether the provider is made for this call:
        the file's model, else (or when the file may not pick it) `[subagents] model`, else
        the parent's."""
        wanted: list[tuple[str | None, str | None]] = [(self.subagents.default_model, None)]
        if kind is not None and kind.model:
            wanted.insert(0, (kind.model, kind.model_named_by))
        choose = self.subagents.choose_model
        for spec, named_by in wanted:
            if spec is None or choose is None:
                continue
            try:
                chosen = choose(spec, named_by)
            except ValueError as exc:
                raise ToolError(f"Subagent model {spec}: {exc}") from None
            if chosen is not None:
                return *chosen, True
        return self.subagents.parent.provider, self.subagents.parent.model, False

    def _agent(self, kind: SubagentKind | None, provider: Provider, model: Model) -> Agent:
        subagents, parent = self.subagents, self.subagents.parent
        tools = subagents.tools_for(kind)
        prompt = subagents.system_prompt([tool.name for tool in tools])
        if kind is not None and kind.prompt:
            prompt = f"{prompt}\n\n{kind.prompt}"
        return Agent(
            provider,
            model,
            tools,
            prompt,
            options=parent.options,
            budget=parent.budget,
            hooks=self._one_question_at_a_time(parent.hooks),
        )

    def _one_question_at_a_time(self, hooks: ToolHooks) -> ToolHooks:
        def guarded(before: BeforeToolCall) -> BeforeToolCall:
            async def check(context: ToolCallContext) -> str | None:
                async with self._questions:
                    return await before(context)

            return check

        return ToolHooks(before=[guarded(b) for b in hooks.before], after=hooks.after)


class _Progress:
    """Follows the subagent's events: its tool calls (reported as they start and end) and the
    usage of its requests."""

    def __init__(
        self,
        params: dict[str, Any],
        kind: SubagentKind | None,
        model: Model,
        on_update: ToolUpdate | None,
    ) -> None:
        self.calls: list[dict[str, Any]] = []
        self.usage = Usage()
        self.details: dict[str, Any] = {
            "subagent": kind.name if kind else "general",
            "description": params.get("description", ""),
            "model": f"{model.provider}/{model.id}",
            "tool_calls": self.calls,
        }
        self._on_update = on_update

    async def on_event(self, event: AgentEvent) -> None:
        if isinstance(event, MessageEndEvent) and isinstance(event.message, AssistantMessage):
            self.usage += event.message.usage
        elif isinstance(event, ToolExecutionStartEvent):
            self.calls.append(
                {"id": event.tool_call_id, "name": event.tool_name, "arguments": event.arguments}
            )
            await self._report()
        elif isinstance(event, ToolExecutionEndEvent):
            for call in self.calls:
                if call["id"] == event.tool_call_id:
                    call["is_error"] = event.result.is_error
            await self._report()

    def _snapshot(self) -> dict[str, Any]:
        """The details as of now; the usage only once a server reported some (a server that
        reports none leaves it out rather than count zero tokens)."""
        calls = [dict(call) for call in self.calls]
        details = {**self.details, "tool_calls": calls}
        if usage_known(self.usage):
            details[USAGE_DETAIL] = to_dict(self.usage)
        return details

    async def _report(self) -> None:
        if self._on_update is not None:
            lines = "\n".join(_call_line(call) for call in self.calls)
            await self._on_update(ToolResult([TextContent(lines)], self._snapshot()))

    def result(self, final: AssistantMessage) -> ToolResult:
        details = self._snapshot()
        if final.stop_reason in ("error", "aborted"):
            why = final.error_message or final.stop_reason
            return ToolResult([TextContent(f"The subagent failed: {why}")], details, True)
        answer = final.text or "The subagent ended without an answer."
        return ToolResult([TextContent(answer)], details)


def _call_line(call: dict[str, Any]) -> str:
    """`read {"path": "src/app.py"}`, cut short: one line per subagent tool call."""
    arguments = json.dumps(call["arguments"], ensure_ascii=False)
    if len(arguments) > ARGUMENT_PREVIEW:
        arguments = arguments[: ARGUMENT_PREVIEW - 1] + "…"
    mark = " (failed)" if call.get("is_error") else ""
    return f"{call['name']} {arguments}{mark}"
