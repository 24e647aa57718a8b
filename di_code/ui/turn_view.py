"""What frames a turn on screen: its top and closing rules, the red panel of an error or an
abort, and the status line while a request is out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text

from di_code.ai.events import RetryEvent
from di_code.ai.reply_notes import usage_known
from di_code.ai.types import Usage
from di_code.system.safe_text import visible
from di_code.ui.footer import short_count
from di_code.ui.tool_view import format_seconds, framed, new_spinner

STALL_NOTICE = 5.0
"""Seconds without a stream event after which the status line says the stream is silent."""
RETRY_LINGER = 0.5
"""Seconds the retry line stays after its countdown ends (the new attempt is being sent)."""


def turn_rule(title: str) -> RenderableType:
    """The top of a turn's frame (see the module doc for why a rule and not a box)."""
    from rich.rule import Rule

    title_text = Text.assemble(("── ", "dim"), (title, "bold"))
    return Group(Text(), Rule(title_text, align="left", style="dim"))


def closing_rule(text: str) -> RenderableType:
    from rich.rule import Rule

    return Rule(Text(text, style="dim"), align="right", style="dim")


def alert_panel(title: str, reason: str) -> RenderableType:
    """An error or an abort: a red box with the one-line reason (its first line)."""
    first = (reason.strip().splitlines() or [""])[0]
    return framed(Text(visible(first), style="red"), Text(title, style="bold red"), "red")


@dataclass(slots=True)
class Activity:
    """The status line under the live area while a request is out: `waiting for m … 3.2s`
    until the first event, the reason and the countdown while the provider backs off, and
    a notice when a started stream goes silent. Drawn lazily, so every frame is current."""

    model: str
    clock: Callable[[], float]
    since: float
    streaming: bool = False
    retry: RetryEvent | None = None
    retry_at: float = 0.0
    spinner: Any = field(default_factory=new_spinner)

    def line(self, width: int = 80) -> str | None:
        """The status for a line `width` wide; a long retry reason is cut, not the countdown."""
        now = self.clock()
        if self.retry is not None and now < self.retry_at + RETRY_LINGER:
            retry = self.retry
            wait = max(0.0, self.retry_at - now)
            countdown = f" · retry {retry.attempt}/{retry.max_retries} in {wait:.1f}s"
            reason = visible(retry.reason.partition(": ")[0])
            room = max(10, width - 2 - len(countdown))
            if len(reason) > room:
                reason = reason[: room - 1] + "…"
            return reason + countdown
        silent = now - self.since
        if not self.streaming:
            return f"waiting for {visible(self.model)} … {format_seconds(silent)}"
        if silent >= STALL_NOTICE:
            return f"no data from {visible(self.model)} for {format_seconds(silent)}"
        return None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        line = self.line(options.max_width)
        if line is None:
            return
        self.spinner.update(text=Text(line, style="yellow" if self.retry else "dim"))
        yield self.spinner


def turn_summary(usage: Usage, seconds: float) -> str:
    """The closing rule's tokens and time; `?` when the server reported no usage."""
    if not usage_known(usage):
        return f"↑? ↓? · {format_seconds(seconds)}"
    return f"↑{short_count(usage.sent)} ↓{short_count(usage.output)} · {format_seconds(seconds)}"
