"""`run`'s progress on stderr (text mode, stderr a terminal): a spinner while waiting and one
line per tool call, so the final answer alone goes to stdout. Rich respects NO_COLOR."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from di_code.agent.events import (
    AgentEndEvent,
    AgentEvent,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
)
from di_code.tools.permissions import summarize

if TYPE_CHECKING:
    from rich.console import Console
    from rich.status import Status


class Progress:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.status: Status | None = None

    def __call__(self, event: AgentEvent) -> None:
        match event:
            case MessageStartEvent(message=message) if message.role == "assistant":
                self._spin("waiting for the model")
            case MessageEndEvent() | AgentEndEvent():
                self._stop()
            case ToolExecutionStartEvent(tool_name=name, arguments=arguments):
                args: dict[str, Any] = arguments if isinstance(arguments, dict) else {}
                self.console.print(f"→ {summarize(name, args)}", markup=False, highlight=False)
                self._spin(f"running {name}")
            case ToolExecutionEndEvent(result=result):
                self._stop()
                if result.is_error:
                    first = result.text.strip().splitlines()[:1] or ["failed"]
                    self.console.print(f"  ✗ {first[0][:200]}", style="red", markup=False)
            case _:
                pass

    def _spin(self, text: str) -> None:
        self._stop()
        self.status = self.console.status(text)
        self.status.start()

    def _stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None


def stderr_progress() -> Progress:
    from rich.console import Console

    return Progress(Console(stderr=True))
