"""A built-in tool offered to the model by its card, its code loaded when the model calls it.

Importing the seven tools' modules is a tenth of `di-code run`'s start-up, and a prompt uses
few of them (a question, none): the agent gets these stand-ins, and each real tool is built
the first time the model calls it, its module imported off the event loop (system/first_use.py).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

from di_code.agent.tool import ToolOutput, ToolUpdate
from di_code.system.abort import AbortSignal
from di_code.system.first_use import import_off_loop
from di_code.tools.builtin.cards import ToolCard


class LazyTool:
    """An AgentTool with the card's name, description and schema; `execute` builds the real
    tool (`make(*args)` from `module`) once and hands every call to it. `describe`, when
    given, says the description as of now (bash's names the sandbox of the moment)."""

    __slots__ = (
        "_args",
        "_card",
        "_describe",
        "_make",
        "_module",
        "_tool",
        "name",
        "parallel_safe",
        "parameters",
    )

    def __init__(
        self,
        card: ToolCard,
        module: str,
        make: str,
        *args: Any,
        describe: Callable[[], str] | None = None,
    ) -> None:
        self.name = card.name
        self.parameters = card.parameters
        self.parallel_safe = card.parallel_safe
        self._card, self._describe = card, describe
        self._module, self._make, self._args = module, make, args
        self._tool: Any = None

    @property
    def module(self) -> str:
        """Where the real tool is made: imported at its first call."""
        return self._module

    @property
    def description(self) -> str:
        return self._describe() if self._describe is not None else self._card.description

    @property
    def wrapped(self) -> Any:
        """The real tool (agent.tool.unwrapped), built on first use."""
        return self.tool

    @property
    def tool(self) -> Any:
        """The real tool, built on first use."""
        if self._tool is None:
            make: Callable[..., Any] = getattr(import_module(self._module), self._make)
            self._tool = make(*self._args)
        return self._tool

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal,
        on_update: ToolUpdate | None = None,
    ) -> ToolOutput:
        if self._tool is None:
            await import_off_loop(self._module)
        output: ToolOutput = await self.tool.execute(tool_call_id, params, signal, on_update)
        return output
