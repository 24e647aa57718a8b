"""The tool call loop: ask the model, run the tools it asks for, append the results, repeat.

The loop knows nothing of its audience: it reports through `emit` and returns the messages it added.
Its rules (docs/DESIGN.md, The tool loop): tools run only for `stop_reason == "tool_use"`, serially
and in order, except that consecutive calls of tools that declare `parallel_safe = True`
(subagents, `lsp`) run together, their results still added in call order; unknown tools, invalid
arguments and raising tools become error results the model sees; an abort stops the remaining
tools and any further request and ends with a local `aborted` assistant message; a provider
failure ends the prompt with that failed message."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

import msgspec.structs

from di_code.agent.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from di_code.agent.tool import AgentTool, ToolResult, own_arguments
from di_code.agent.tool_call import ToolHooks, run_tool_call
from di_code.ai.budget import RequestBudget, limit_message
from di_code.ai.codec import encodable, json_safe
from di_code.ai.stream import ABORTED_REQUEST_TEXT, Provider, StreamOptions
from di_code.ai.transcript import messages_for_request
from di_code.ai.types import (
    AssistantMessage,
    Clock,
    Context,
    Message,
    Model,
    StopReason,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
    now_ms,
)
from di_code.ai.validation import warm_up_validation
from di_code.system.abort import AbortSignal

Emit = Callable[[AgentEvent], Awaitable[None]]
MessageSource = Callable[[], list[UserMessage]]
MoreTurns = Callable[[int, int], Awaitable[bool]]
"""Asked with (requests the prompt made, `max_turns`) each time the limit is reached: True
allows as many again."""
Offer = Callable[[Sequence[AgentTool]], Sequence[AgentTool]]
"""Which of the tools the next request offers the model (the permission mode's: plan mode
offers the reading ones); a call of a tool not offered still reaches the hooks, which refuse it."""

DEFAULT_MAX_TURNS = 100
"""Model requests per prompt when neither `--max-turns` nor `[limits] max_turns` says: far
above what a real task takes (a few dozen), low enough that a model that never stops calling
tools is stopped before it has cost much."""

ABORTED_LOOP_TEXT = "Tool loop aborted"
logger = logging.getLogger(__name__)


def _no_messages() -> list[UserMessage]:
    return []


class LoopConfig(msgspec.Struct):
    provider: Provider
    model: Model
    tools: Sequence[AgentTool] = ()
    """Read at every request: a tool's description may change between two (bash's names the
    sandbox of the moment)."""
    offer: Offer | None = None
    """None: every tool is offered."""
    hooks: ToolHooks = msgspec.field(default_factory=ToolHooks)
    conversation: object = None
    """Who the conversation is (the Agent), told to the hooks with each call."""
    system_prompt: str | None = None
    now: Clock = now_ms
    budget: RequestBudget = msgspec.field(default_factory=RequestBudget)
    """Counts every request the prompt causes (the provider is wrapped with it); read here
    to end cleanly at the limit."""
    more_turns: MoreTurns | None = None
    """None: the limit ends the prompt with an error (a run without a terminal)."""
    options: StreamOptions = msgspec.field(default_factory=StreamOptions)
    steering: MessageSource = _no_messages
    """Messages typed while the prompt runs: sent with the next request."""
    follow_ups: MessageSource = _no_messages
    """Messages that start a new turn once the agent would have stopped."""
    notices: MessageSource = _no_messages
    """What happened meanwhile outside the conversation (a background job ended): sent
    before the next request's prompt or steering, each once."""


async def run_agent_loop(
    prompts: list[UserMessage],
    history: Sequence[Message],
    config: LoopConfig,
    emit: Emit,
    signal: AbortSignal,
) -> list[Message]:
    """Run one prompt to its end; return the messages it added (the last is an assistant's)."""
    run = _Run(config, emit, signal, list(history))
    await emit(AgentStartEvent())
    await run.turns(prompts)
    await emit(AgentEndEvent(list(run.added)))
    return run.added


class _Run:
    def __init__(
        self, config: LoopConfig, emit: Emit, signal: AbortSignal, context: list[Message]
    ) -> None:
        self.config = config
        self.emit = emit
        self.signal = signal
        self.context = context
        self.added: list[Message] = []
        self.options = msgspec.structs.replace(config.options, signal=signal)

    async def turns(self, pending: list[UserMessage]) -> None:
        budget = self.config.budget
        while True:
            await self.emit(TurnStartEvent())
            for prompt in [*self.config.notices(), *pending]:
                await self._add(prompt)
            if budget.exhausted and budget.limit is not None:
                if await self._more_turns(budget.made, budget.limit):
                    budget.grant_again()
                elif not self.signal.aborted:  # an abort during the question ends as aborted
                    await self._local_end("error", limit_message(budget.limit))
                    return
            if self.signal.aborted:
                await self._local_end("aborted", ABORTED_REQUEST_TEXT)
                return
            assistant = await self._request()
            calls = assistant.tool_calls
            if assistant.stop_reason != "tool_use" or not calls:
                await self.emit(TurnEndEvent(assistant, []))
                if assistant.stop_reason in ("error", "aborted"):
                    return
                pending = self.config.steering() or self.config.follow_ups()
                if not pending:
                    return
                continue
            results = await self._run_tools(calls)
            await self.emit(TurnEndEvent(assistant, results))
            if self.signal.aborted:
                await self.emit(TurnStartEvent())
                await self._local_end("aborted", ABORTED_LOOP_TEXT)
                return
            pending = self.config.steering()

    async def _more_turns(self, made: int, limit: int) -> bool:
        ask = self.config.more_turns
        return ask is not None and not self.signal.aborted and await ask(made, limit)

    async def _add(self, message: Message) -> None:
        await self.emit(MessageStartEvent(message))
        self.context.append(message)
        self.added.append(message)
        await self.emit(MessageEndEvent(message))

    def _preview(self) -> AssistantMessage:
        model = self.config.model
        return AssistantMessage([], model.provider, model.id, timestamp=self.config.now())

    async def _request(self) -> AssistantMessage:
        config = self.config
        offered = config.tools if config.offer is None else config.offer(config.tools)
        definitions = [ToolDefinition(t.name, t.description, t.parameters) for t in offered]
        # What may be sent is decided per request: a reply aborted before this prompt goes
        # as a note once the prompt follows it.
        messages = messages_for_request(self.context, config.now())
        context = Context(config.system_prompt, messages, definitions)
        stream = config.budget.wrap(config.provider).stream(config.model, context, self.options)
        await self.emit(MessageStartEvent(self._preview()))
        async for event in stream:
            if event.type == "tool_call_start":
                warm_up_validation()  # while its arguments stream in: jsonschema judges them
            await self.emit(MessageUpdateEvent(event))
        message = await stream.result()
        self.context.append(message)
        self.added.append(message)
        await self.emit(MessageEndEvent(message))
        return message

    async def _local_end(self, reason: StopReason, error_message: str) -> None:
        """End without asking the model, so the last message is still an assistant's. Its
        start event already carries the stop reason: a listener can tell no request was made."""
        message = msgspec.structs.replace(
            self._preview(), stop_reason=reason, error_message=error_message
        )
        await self.emit(MessageStartEvent(message))
        self.context.append(message)
        self.added.append(message)
        await self.emit(MessageEndEvent(message))
        await self.emit(TurnEndEvent(message, []))

    async def _run_tools(self, calls: list[ToolCall]) -> list[ToolResultMessage]:
        results: list[ToolResultMessage] = []
        for batch in self._batches(calls):
            if len(batch) == 1:
                done = [await self._execute(batch[0])]
            else:
                done = list(await asyncio.gather(*(self._execute(call) for call in batch)))
            for result in done:
                results.append(result)
                await self._add(result)
            if self.signal.aborted:  # after the call: an abort before the
                break  # batch still reports the first call, as aborted
        return results

    def _batches(self, calls: list[ToolCall]) -> list[list[ToolCall]]:
        """The calls in order, consecutive parallel-safe ones grouped to run together."""
        batches: list[list[ToolCall]] = []
        for call in calls:
            if batches and self._parallel(call) and self._parallel(batches[-1][-1]):
                batches[-1].append(call)
            else:
                batches.append([call])
        return batches

    def _parallel(self, call: ToolCall) -> bool:
        return getattr(self._tool(call.name), "parallel_safe", False) is True

    def _tool(self, name: str) -> AgentTool | None:
        return next((tool for tool in self.config.tools if tool.name == name), None)

    async def _execute(self, call: ToolCall) -> ToolResultMessage:
        arguments = own_arguments(self._tool(call.name), call.arguments)
        await self.emit(ToolExecutionStartEvent(call.id, call.name, arguments))
        output = _storable(call.name, await self._outcome(call))
        result = ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=output.content,
            is_error=output.is_error,
            timestamp=self.config.now(),
            details=output.details,
        )
        await self.emit(ToolExecutionEndEvent(call.id, call.name, result))
        return result

    async def _outcome(self, call: ToolCall) -> ToolResult:
        async def on_update(partial: ToolResult) -> None:
            partial = _storable(call.name, partial)
            await self.emit(ToolExecutionUpdateEvent(call.id, call.name, partial))

        tool = self._tool(call.name)
        config = self.config
        return await run_tool_call(
            call, tool, self.signal, config.hooks, on_update, config.conversation
        )


def _storable(tool_name: str, output: ToolResult) -> ToolResult:
    """Tool output is data from outside, made writable once here so the session and the JSON
    output always take it: text made encodable (a file name, a command's bytes), details made
    JSON (what `json` cannot encode becomes text, said once in the log)."""
    converted: set[str] = set()
    details = json_safe(output.details, converted)
    if converted:
        logger.warning(
            "tool %s: details converted to text where not JSON (%s)",
            tool_name,
            ", ".join(sorted(converted)),
        )
    content = [
        TextContent(encodable(block.text)) if isinstance(block, TextContent) else block
        for block in output.content
    ]
    return ToolResult(content, details, output.is_error)
