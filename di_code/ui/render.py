"""The Renderer: draws AgentEvents with Rich, for `chat` and for `run`'s progress output.

What is final is printed once into the scrollback; what is still changing (the open tail of
the reply, thinking, a running tool's panel with its spinner and partial output, the status
line while the model is waited for) is shown in a live area that is cleared when it ends. On
a pipe there is no live area and the output is plain text; Rich itself honours NO_COLOR.
`compact=True` is `run`'s progress: one line per tool call and the failures, no reply text
(that goes to stdout) and no footer.

A turn is framed by two horizontal rules: `── turn 1 · model ──` above and the turn's tokens
and time below, the reply and the tool panels between them. The frame has no side borders on
purpose: code selected and copied from the answer then carries no border glyph and no indent
(a box around the reply would put `│ ` in front of every copied line).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, assert_never

from rich.console import Console, Group, RenderableType
from rich.text import Text

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
from di_code.agent.tool import usage_in_details
from di_code.ai.events import (
    DoneEvent,
    ErrorEvent,
    RetryEvent,
    StartEvent,
    StreamEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from di_code.ai.reply_notes import cut_reply_note
from di_code.ai.types import (
    AssistantMessage,
    Message,
    Model,
    TextContent,
    ToolResultMessage,
)
from di_code.session.prompt_notes import split_notes
from di_code.system.safe_text import visible
from di_code.tools.builtin.support.job_table import is_job_notice
from di_code.tools.policy.permissions import Approval, ApprovalRequest, Approver
from di_code.ui.footer import UsageTotals
from di_code.ui.markdown_stream import (
    LiveArea,
    MarkdownStream,
    Schedule,
    default_live,
    loop_schedule,
)
from di_code.ui.plan_view import plan_change_line, plan_of, plan_panel
from di_code.ui.thinking_view import Thoughts, thinking_live, thinking_panel
from di_code.ui.tool_view import (
    RunningTool,
    compact_line,
    full_output_panel,
    tool_panel,
)
from di_code.ui.turn_view import Activity, alert_panel, closing_rule, turn_rule, turn_summary

ECHO_LINES = 10
"""A prompt longer than this (a paste) is echoed cut to its first lines."""
"""How many past prompts (with their answers) a resumed conversation shows."""


@dataclass(frozen=True, slots=True)
class FinishedTool:
    name: str
    arguments: Any
    result: ToolResultMessage


@dataclass(slots=True)
class _Slot:
    """The live area as MarkdownStream sees it: what it shows goes above the status line."""

    renderer: Renderer
    content: RenderableType | None = field(default=None)

    def show(self, renderable: RenderableType | None) -> None:
        self.content = renderable
        self.renderer.redraw()


class Renderer:
    """Use `renderer.handle` as an Agent listener."""

    def __init__(
        self,
        console: Console,
        *,
        compact: bool = False,
        live: LiveArea | None = None,
        clock: Callable[[], float] = time.monotonic,
        model: Model | None = None,
        schedule: Schedule = loop_schedule,
    ) -> None:
        self.console = console
        self.compact = compact
        self.model = model
        self.usage = UsageTotals()
        self.finished: list[FinishedTool] = []
        """Every finished tool call shown as a panel (not a plan update), for Ctrl-O and /expand."""
        self.previewed: list[Any] = []
        """Arguments of calls whose diff an approval question already showed (shared with
        the approver): their result panel does not show it again."""
        self._live = default_live(console) if live is None else live
        self._slot = _Slot(self)
        self._activity: Activity | None = None
        self._paused = False
        self._clock = clock
        self._schedule = schedule
        self._turn = 0
        self._turn_started = 0.0
        self._framed = False
        """Whether this turn's top rule was drawn (then its closing rule is too)."""
        self._made_up = False
        """The last answer was made up by the loop, without a request (it cost nothing)."""
        self._markdown: MarkdownStream | None = None
        self._thinking = ""
        self.thoughts = Thoughts()
        self.thinking_whole = False
        """Ctrl-T: finished thinking blocks are printed whole, not folded."""
        self._running: dict[str, RunningTool] = {}
        self.plan: list[dict[str, str]] | None = None
        """The model's plan while a prompt runs: drawn in the live area, updated in place."""
        self.echo_next: str | None = None
        """The next prompt as the input showed it (a long paste as its placeholder)."""

    def __call__(self, event: AgentEvent) -> None:
        self.handle(event)

    def handle(self, event: AgentEvent) -> None:
        match event:
            case AgentStartEvent():
                self._turn = 0
            case TurnStartEvent():
                self._turn += 1
                self._turn_started = self._clock()
            case MessageStartEvent(message=message):
                self._message_start(message)
            case MessageUpdateEvent(event=stream_event):
                self._stream(stream_event)
            case MessageEndEvent(message=message):
                if isinstance(message, AssistantMessage):
                    self._assistant_end(message)
            case ToolExecutionStartEvent(tool_call_id=call_id, tool_name=name, arguments=args):
                self._running[call_id] = RunningTool(name, args, self._clock(), self._clock)
                self._show(None)  # the `preparing` line gives way to the running panels
            case ToolExecutionUpdateEvent(tool_call_id=call_id, partial_result=partial):
                self._tool_update(call_id, partial.text, partial.details)
            case ToolExecutionEndEvent(tool_call_id=call_id, result=result):
                if (spent := usage_in_details(result.details)) is not None:
                    self.usage.add_elsewhere(spent)
                self._tool_end(call_id, result)
            case TurnEndEvent(message=message) if self._framed:
                seconds = self._clock() - self._turn_started
                self._print(closing_rule(turn_summary(message.usage, seconds)), full_only=True)
            case TurnEndEvent():
                pass
            case AgentEndEvent():
                self.echo_next = None
                if self.plan is not None:  # the plan as the prompt left it, once, not kept live
                    self._print(plan_panel(self.plan), full_only=True)
                    self.plan = None
                self._show(None)
                self._print(Text(self.footer(), style="dim"), full_only=True)
            case _:
                assert_never(event)

    def footer(self) -> str:
        return self.usage.footer(self.model)

    def show_user(self, text: str, *, queued: bool = False) -> None:
        """Echo what the user typed (the REPL erases its prompt line)."""
        label = Text("queued › " if queued else "› ", style="bold cyan" if not queued else "dim")
        lines = text.splitlines() or [""]
        shown = "\n".join(lines[:ECHO_LINES])
        label.append(visible(shown), style="bold" if not queued else "dim")
        if len(lines) > ECHO_LINES:
            label.append(f"\n… {len(lines) - ECHO_LINES} more lines", style="dim")
        self.console.print(label)

    def expanded(self, number: int | None = None) -> RenderableType:
        """The full output of the last (or the `number`th, from 1) finished tool call."""
        if not self.finished:
            raise ValueError("No tool call to expand yet.")
        index = len(self.finished) if number is None else number
        if not 1 <= index <= len(self.finished):
            count = len(self.finished)
            if count == 1:
                raise ValueError("There is 1 tool call: /expand 1.")
            raise ValueError(f"There are {count} tool calls: /expand 1 to {count}.")
        call = self.finished[index - 1]
        from di_code.ui.task_transcript import transcript_panel  # reads a session file

        whole = transcript_panel(index, call.name, call.arguments, call.result)
        return whole or full_output_panel(index, call.name, call.arguments, call.result)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Nothing live is drawn inside (a question is being asked on the same terminal), and
        the time spent inside counts for neither the running calls nor the turn: a command that
        waited a minute for its approval and ran for 0.2 s took 0.2 s."""
        self._paused = True
        self.redraw()
        since = self._clock()
        try:
            yield
        finally:
            waited = self._clock() - since
            self._turn_started += waited
            for running in self._running.values():
                running.started += waited
            self._paused = False
            self.redraw()

    def pausing(self, approver: Approver) -> Approver:
        """`approver` with the live area hidden while it asks: a spinner redrawn over the
        question would garble it (the live area and the question share the terminal)."""

        async def ask(request: ApprovalRequest) -> Approval:
            with self.paused():
                return await approver(request)

        return ask

    def redraw(self) -> None:
        """The live area: the plan, a panel per running call (parallel calls each have one),
        the open part of the reply, the status line."""
        plan = None if self.plan is None or self.compact else plan_panel(self.plan)
        live = (plan, *self._running.values(), self._slot.content, self._activity)
        parts = [part for part in live if part is not None]
        if self._paused or not parts:
            self._live.show(None)
        else:
            self._live.show(parts[0] if len(parts) == 1 else Group(*parts))

    def _show(self, renderable: RenderableType | None) -> None:
        self._slot.show(renderable)

    def _print(self, renderable: RenderableType, *, full_only: bool = False) -> None:
        if not (full_only and self.compact):
            self.console.print(renderable)

    def _reply_stream(self) -> MarkdownStream:
        return MarkdownStream(
            self.console, live=self._slot, clock=self._clock, schedule=self._schedule
        )

    def print_reply(self, text: str) -> None:
        stream = self._reply_stream()
        stream.append(visible(text))
        stream.finish()

    def remember(self, name: str, arguments: Any, result: ToolResultMessage) -> None:
        self.finished.append(FinishedTool(name, arguments, result))

    def _tool_update(self, call_id: str, text: str, details: Any) -> None:
        running = self._running.get(call_id)
        if running is not None:
            running.set_output(text, details)
            self.redraw()

    def _tool_end(self, call_id: str, result: ToolResultMessage) -> None:
        running = self._running.pop(call_id, None)
        self._show(None)
        args = running.arguments if running else None
        seconds = self._clock() - running.started if running else 0.0
        if not self.compact and (steps := plan_of(result)) is not None:
            self.plan = steps  # redrawn in place, not a new panel per change
            self.console.print(plan_change_line(steps))
            self.redraw()
            return
        self.remember(result.tool_name, args, result)
        if self.compact:
            self.console.print(compact_line(result.tool_name, args, result, seconds))
            return
        shown_before = args is not None and args in self.previewed
        if shown_before:
            self.previewed.remove(args)
        self.console.print(tool_panel(result.tool_name, args, result, seconds, shown_before))

    def _message_start(self, message: Message) -> None:
        """The turn's top rule goes before the model's answer, after the prompt it answers.
        An answer the loop made up without a request (aborted after the tools, the turn
        limit) gets no frame: it is not a turn of the model's, and it spent no tokens."""
        if isinstance(message, AssistantMessage):
            self._made_up = message.error_message is not None
        if self._made_up and message.role == "assistant":
            self._framed = False
        elif message.role == "assistant":
            self._framed = True
            model = self.model.id if self.model else "the model"
            title = f"turn {self._turn}" + (f" · {visible(self.model.id)}" if self.model else "")
            self._print(turn_rule(title), full_only=True)
            self._activity = Activity(model, self._clock, self._clock())
            self.redraw()
        elif message.role == "user" and not self.compact and not is_job_notice(user_text(message)):
            shown, self.echo_next = self.echo_next, None
            self.show_user(user_text(message, shown))

    def _stream(self, event: StreamEvent) -> None:
        activity = self._activity
        if activity is not None and not isinstance(event, RetryEvent | StartEvent):
            activity.since, activity.streaming, activity.retry = self._clock(), True, None
        match event:
            case TextStartEvent():
                if not self.compact:
                    self._markdown = self._reply_stream()
            case TextDeltaEvent(delta=delta):
                if self._markdown is not None:
                    self._markdown.append(visible(delta))
            case TextEndEvent():
                self._end_text()
            case ThinkingStartEvent():
                self._thinking = ""
            case ThinkingDeltaEvent(delta=delta):
                self._thinking += delta
                self._show(thinking_live(self._thinking))
            case ThinkingEndEvent(content=content):
                self._show(None)
                if content.strip():  # an encrypted reasoning item alone has nothing to show
                    self.thoughts.add(content, folded=not self.thinking_whole)
                    self._print(thinking_panel(content, whole=self.thinking_whole), full_only=True)
            case ToolCallStartEvent(name=name):
                self._show(Text(f"● preparing {visible(name)} …", style="dim"))
            case RetryEvent(delay=delay):
                if activity is not None:
                    activity.retry, activity.retry_at = event, self._clock() + delay
                self.redraw()
            case ToolCallDeltaEvent() | ToolCallEndEvent() | StartEvent():
                pass
            case DoneEvent() | ErrorEvent():
                self._activity = None
                self._show(None)
            case _:
                assert_never(event)

    def _end_text(self) -> None:
        if self._markdown is not None:
            self._markdown.finish()
            self._markdown = None

    def _assistant_end(self, message: AssistantMessage) -> None:
        self._end_text()
        self._activity = None
        self._show(None)
        if not self._made_up:
            self.usage.add(message.usage, cut_short=message.stop_reason in ("aborted", "error"))
        match message.stop_reason:
            case "aborted":
                self.console.print(alert_panel("■ aborted", message.error_message or "Aborted."))
            case "error":
                error = message.error_message or "the request failed"
                self.console.print(alert_panel("✗ error", error))
            case "length":
                note = f"⚠ stopped: {cut_reply_note(message)}"
                self.console.print(Text(note, style="yellow"))
            case "stop" | "tool_use":
                pass
            case _:
                assert_never(message.stop_reason)


def user_text(message: Message, typed: str | None = None) -> str:
    """What the user typed of a prompt (`typed`, as the input showed it; else the prompt's
    text without the notes di-code put in front for the model, a `!command`'s output or what
    /undo restored, shown when they happened), and `[image]` for each picture attached."""
    text = "".join(block.text for block in message.content if isinstance(block, TextContent))
    images = sum(not isinstance(block, TextContent) for block in message.content)
    return (split_notes(text)[1] if typed is None else typed) + "[image]" * images
