"""The Renderer: draws AgentEvents with Rich, for `chat` and for `run`'s progress output.

What is final is printed once into the scrollback; what is still changing (the open tail of
the reply, thinking, a running tool with its spinner and partial output) is shown in a live
area that is cleared when it ends. On a pipe there is no live area and the output is plain
text; Rich itself honours NO_COLOR. `compact=True` is `run`'s progress: one line per tool
call and the failures, no reply text (that goes to stdout) and no footer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import assert_never

from rich.console import Console
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
from di_code.ai.events import (
    DoneEvent,
    ErrorEvent,
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
from di_code.ai.types import AssistantMessage, Message, Model, TextContent, ToolResultMessage
from di_code.ui.footer import UsageTotals
from di_code.ui.markdown_stream import LiveArea, MarkdownStream, default_live
from di_code.ui.tool_view import RunningTool, collapse, compact_line, tool_block

THINKING_LINES = 3


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
    ) -> None:
        self.console = console
        self.compact = compact
        self.model = model
        self.usage = UsageTotals()
        self._live = default_live(console) if live is None else live
        self._clock = clock
        self._turn = 0
        self._markdown: MarkdownStream | None = None
        self._thinking = ""
        self._running: dict[str, RunningTool] = {}

    def __call__(self, event: AgentEvent) -> None:
        self.handle(event)

    def handle(self, event: AgentEvent) -> None:
        match event:
            case AgentStartEvent():
                self._turn = 0
            case TurnStartEvent():
                self._turn += 1
            case MessageStartEvent(message=message):
                self._message_start(message)
            case MessageUpdateEvent(event=stream_event):
                self._stream(stream_event)
            case MessageEndEvent(message=message):
                if isinstance(message, AssistantMessage):
                    self._assistant_end(message)
            case ToolExecutionStartEvent(tool_call_id=call_id, tool_name=name, arguments=args):
                running = RunningTool(name, args, self._clock(), self._clock)
                self._running[call_id] = running
                self._live.show(running)
            case ToolExecutionUpdateEvent(tool_call_id=call_id, partial_result=partial):
                self._tool_update(call_id, partial.content)
            case ToolExecutionEndEvent(tool_call_id=call_id, result=result):
                self._tool_end(call_id, result)
            case TurnEndEvent():
                pass
            case AgentEndEvent():
                self._live.show(None)
                self._print(Text(f"\n{self.footer()}", style="dim"), full_only=True)
            case _:
                assert_never(event)

    def footer(self) -> str:
        return self.usage.footer(self.model)

    def show_user(self, text: str, *, queued: bool = False) -> None:
        """Echo what the user typed (the REPL erases its prompt line)."""
        label = Text("queued › " if queued else "› ", style="bold cyan" if not queued else "dim")
        label.append(text, style="bold" if not queued else "dim")
        self.console.print(label)

    def _print(self, text: Text, *, full_only: bool = False) -> None:
        if not (full_only and self.compact):
            self.console.print(text)

    def _tool_update(self, call_id: str, content: Sequence[object]) -> None:
        running = self._running.get(call_id)
        if running is not None:
            running.set_output(_text_of(content))
            self._live.show(running)

    def _tool_end(self, call_id: str, result: ToolResultMessage) -> None:
        self._live.show(None)
        running = self._running.pop(call_id, None)
        args = running.arguments if running else None
        seconds = self._clock() - running.started if running else 0.0
        view = compact_line if self.compact else tool_block
        self.console.print(view(result.tool_name, args, result, seconds))

    def _message_start(self, message: Message) -> None:
        """The turn marker goes before the model's answer, after the prompt it answers."""
        if message.role == "assistant":
            self._print(Text(f"\n── turn {self._turn}", style="dim"), full_only=True)
        elif message.role == "user" and not self.compact:
            text = "".join(
                block.text if isinstance(block, TextContent) else "[image]"
                for block in message.content
            )
            self.show_user(text)

    def _stream(self, event: StreamEvent) -> None:
        match event:
            case TextStartEvent():
                if not self.compact:
                    self._markdown = MarkdownStream(self.console, live=self._live)
            case TextDeltaEvent(delta=delta):
                if self._markdown is not None:
                    self._markdown.append(delta)
            case TextEndEvent():
                self._end_text()
            case ThinkingStartEvent():
                self._thinking = ""
            case ThinkingDeltaEvent(delta=delta):
                self._thinking += delta
                self._live.show(_thinking_live(self._thinking))
            case ThinkingEndEvent(content=content):
                self._live.show(None)
                self._print(_thinking_block(content), full_only=True)
            case ToolCallStartEvent(name=name):
                self._live.show(Text(f"● preparing {name} …", style="dim"))
            case ToolCallDeltaEvent() | ToolCallEndEvent() | StartEvent():
                pass
            case DoneEvent() | ErrorEvent():
                self._live.show(None)
            case _:
                assert_never(event)

    def _end_text(self) -> None:
        if self._markdown is not None:
            self._markdown.finish()
            self._markdown = None

    def _assistant_end(self, message: AssistantMessage) -> None:
        self._end_text()
        self._live.show(None)
        self.usage.add(message.usage)
        match message.stop_reason:
            case "aborted":
                self.console.print(Text("■ aborted", style="bold red"))
            case "error":
                error = message.error_message or "the request failed"
                self.console.print(Text(f"✗ error: {error}", style="bold red"))
            case "length":
                note = f"⚠ stopped: {cut_reply_note(message)}"
                self.console.print(Text(note, style="yellow"))
            case "stop" | "tool_use":
                pass
            case _:
                assert_never(message.stop_reason)


def _text_of(content: Sequence[object]) -> str:
    return "".join(block.text for block in content if isinstance(block, TextContent))


def _thinking_live(thinking: str) -> Text:
    last = thinking[-300:].replace("\n", " ").strip()
    text = Text.assemble(("✻ thinking ", "dim italic"), (last, "dim italic"))
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text


def _thinking_block(thinking: str) -> Text:
    lines = [line for line in thinking.strip().splitlines() if line.strip()]
    block = Text("✻ thinking\n", style="dim italic")
    block.append_text(collapse(lines, THINKING_LINES, "dim italic"))
    return block
