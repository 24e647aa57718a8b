"""The Agent: a stateful wrapper around the loop that keeps the transcript and fans out events."""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence

from msgspec.structs import replace

from di_code.agent.events import AgentEvent, MessageEndEvent
from di_code.agent.loop import LoopConfig, MessageSource, MoreTurns, Offer, run_agent_loop
from di_code.agent.prompt_hooks import MAX_STOP_CONTINUES, PromptHooks
from di_code.agent.shown_deltas import ShownDeltas
from di_code.agent.tool import AgentTool, bind_tool
from di_code.agent.tool_call import ToolHooks
from di_code.ai.budget import RequestBudget
from di_code.ai.stream import Provider, StreamOptions
from di_code.ai.types import (
    AssistantContent,
    AssistantMessage,
    Clock,
    Message,
    Model,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
    now_ms,
)
from di_code.system.abort import AbortController, AbortSignal

Listener = Callable[[AgentEvent], Awaitable[None] | None]
logger = logging.getLogger(__name__)


class Agent:
    def __init__(
        self,
        provider: Provider,
        model: Model,
        tools: Sequence[AgentTool] = (),
        system_prompt: str | None = None,
        now: Clock | None = None,
        messages: Sequence[Message] = (),
        *,
        max_turns: int | None = None,
        options: StreamOptions | None = None,
        hooks: ToolHooks | None = None,
        prompt_hooks: PromptHooks | None = None,
        budget: RequestBudget | None = None,
        offer: Offer | None = None,
    ) -> None:
        self.budget = budget or RequestBudget(max_turns)
        """The model requests a prompt may cause; a subagent shares its parent's."""
        self.provider = provider
        self.model = model
        self.system_prompt = system_prompt
        self.more_turns: MoreTurns | None = None
        """Asks whether to go on when a prompt reaches `max_turns` (the chat's question)."""
        self.options = options or StreamOptions()
        self.hooks = hooks or ToolHooks()
        """Asked around every tool call (permissions, approval, checkpoints)."""
        self.prompt_hooks = prompt_hooks
        """Asked when a prompt is submitted and when the agent would stop (user hooks)."""
        self.offer = offer
        """Which tools each request offers (the permission mode's); None: all of them."""
        self._tools = list(tools)
        for tool in self._tools:
            bind_tool(tool)  # a tool no form can call is refused now, not at its first call
        self._now = now or now_ms
        self._messages: list[Message] = list(messages)
        self._listeners: list[Listener] = []
        self._deltas = ShownDeltas()
        self._controller: AbortController | None = None
        self.notices: MessageSource = list
        """Messages for the model with its next request, each given once (the background
        jobs that ended since: the job table's)."""
        self._steering: list[UserMessage] = []
        self._follow_ups: list[UserMessage] = []

    @property
    def provider(self) -> Provider:
        return self._provider

    @provider.setter
    def provider(self, provider: Provider) -> None:
        """Every request through the agent's provider (the loop's, compaction's, a subagent
        reusing it) is counted against the agent's budget."""
        self._provider = self.budget.wrap(provider)

    @property
    def tools(self) -> list[AgentTool]:
        return list(self._tools)

    @tools.setter
    def tools(self, tools: Sequence[AgentTool]) -> None:
        """Tools that change mid-session (MCP servers started once the user trusted the
        project): the next prompt offers them."""
        for tool in tools:
            bind_tool(tool)
        self._tools = list(tools)

    def add_tools(self, tools: Sequence[AgentTool]) -> None:
        """Tools that became available later (an MCP server done starting): offered from the
        next request on, a running prompt's included (its tool list is this one)."""
        for tool in tools:
            bind_tool(tool)
        self._tools += tools

    @property
    def transcript(self) -> list[Message]:
        """Independent copies: editing one (its content list, a call's arguments) leaves the
        agent's history as it was."""
        return [_independent(message) for message in self._messages]

    @property
    def is_streaming(self) -> bool:
        return self._controller is not None

    @property
    def signal(self) -> AbortSignal | None:
        """The running prompt's abort signal (None while idle): a listener that may wait long
        (a 100 MB message written to the session) stops waiting when it fires."""
        return None if self._controller is None else self._controller.signal

    def replace_transcript(self, messages: Sequence[Message]) -> None:
        """Start over from `messages` (a new session, a resumed one, a compaction)."""
        self._require_idle()
        self._messages = list(messages)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def steer(self, text: str | list[UserContent]) -> None:
        self._steering.append(UserMessage.of(text, self._now()))

    def follow_up(self, text: str | list[UserContent]) -> None:
        self._follow_ups.append(UserMessage.of(text, self._now()))

    def abort(self, reason: object = None) -> None:
        if self._controller is not None:
            self._controller.abort(reason)

    async def prompt(
        self, prompt: str | list[UserContent] | UserMessage, signal: AbortSignal | None = None
    ) -> AssistantMessage:
        """Run one prompt to its end and return the final assistant message; the prompt hooks
        may refuse it first (PromptBlocked) or have the agent go on once it would stop."""
        self._require_idle()
        message = prompt if isinstance(prompt, UserMessage) else UserMessage.of(prompt, self._now())
        if not any(getattr(block, "text", True) for block in message.content):
            raise ValueError("Prompt is empty.")
        with self.budget.prompt():
            return await self._prompt(message, signal)

    async def _prompt(self, message: UserMessage, signal: AbortSignal | None) -> AssistantMessage:
        hooks = self.prompt_hooks
        if hooks is None:
            return await self._run([message], signal)
        watched = signal or AbortController().signal
        final = await self._run([await hooks.submitted(message, watched)], signal)
        for count in range(MAX_STOP_CONTINUES):
            if final.stop_reason in ("error", "aborted") or watched.aborted:
                break
            reason = await hooks.stopping(final, count > 0, watched)
            if not reason:
                break
            final = await self._run([UserMessage.of(reason, self._now())], signal)
        return final

    async def continue_(self, signal: AbortSignal | None = None) -> AssistantMessage:
        """Ask the model again from the transcript as it is (a retry after compaction)."""
        self._require_idle()
        if not self._messages:
            raise ValueError("Nothing to continue: the transcript is empty.")
        with self.budget.prompt():
            return await self._run([], signal)

    async def _run(
        self, prompts: list[UserMessage], signal: AbortSignal | None
    ) -> AssistantMessage:
        controller = AbortController()
        self._controller = controller
        if signal is not None:
            signal.add_listener(controller.abort)
        try:
            added = await run_agent_loop(
                prompts, self._messages, self._config(), self._emit, controller.signal
            )
        finally:
            self._controller = None
            if signal is not None:
                signal.remove_listener(controller.abort)
        final = added[-1]
        assert isinstance(final, AssistantMessage)
        return final

    def _config(self) -> LoopConfig:
        return LoopConfig(
            provider=self.provider,
            model=self.model,
            tools=self._tools,
            offer=self.offer,
            hooks=self.hooks,
            conversation=self,
            system_prompt=self.system_prompt,
            now=self._now,
            budget=self.budget,
            more_turns=self.more_turns,
            options=self.options,
            steering=lambda: _drain(self._steering),
            follow_ups=lambda: _drain(self._follow_ups),
            notices=self.notices,
        )

    async def _emit(self, event: AgentEvent) -> None:
        if isinstance(event, MessageEndEvent):
            self._messages.append(event.message)
        for shown in self._deltas.shown(event):  # a key in a streamed piece: see shown_deltas
            for listener in list(self._listeners):
                try:
                    result = listener(shown)
                    if inspect.isawaitable(result):
                        await result
                except Exception:
                    logger.exception("agent event listener failed on %s", shown.type)

    def _require_idle(self) -> None:
        if self._controller is not None:
            raise RuntimeError("Agent is already processing a prompt.")


def _independent(message: Message) -> Message:
    """A copy that shares nothing mutable with `message`: blocks are frozen, so only the lists,
    a call's arguments and a result's details are copied (a whole deepcopy is 5x slower)."""
    if isinstance(message, AssistantMessage):
        content: list[AssistantContent] = [
            replace(block, arguments=copy.deepcopy(block.arguments))
            if isinstance(block, ToolCall)
            else block
            for block in message.content
        ]
        return replace(message, content=content)
    if isinstance(message, ToolResultMessage):
        return replace(
            message, content=list(message.content), details=copy.deepcopy(message.details)
        )
    return replace(message, content=list(message.content))


def _drain(queue: list[UserMessage]) -> list[UserMessage]:
    taken = list(queue)
    queue.clear()
    return taken
