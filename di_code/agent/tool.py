"""The AgentTool protocol: a ToolDefinition plus the code that runs it locally.

Tools are written to one contract, `execute(tool_call_id, params, signal?)`, in any of its forms
(a plugin's tool need not take a signal or updates it has no use for); `bind_tool` reads which
form a tool has (the Agent checks each once when it gets them), so the loop then calls every
tool the same way.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from di_code.ai.codec import CodecError, usage_from_dict
from di_code.ai.foreign_names import adopt
from di_code.ai.types import TextContent, ToolResultContent, Usage
from di_code.system.abort import AbortSignal
from di_code.system.own_thread import on_own_thread


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returns when plain content is not enough.

    `details` is JSON for the UI and the session (a diff, a spill-file path), never sent to the
    model; `is_error` reports a failure whose output still matters (a command's non-zero exit).
    """

    content: list[ToolResultContent]
    details: Any = None
    is_error: bool = False

    @property
    def text(self) -> str:
        return "".join(block.text for block in self.content if isinstance(block, TextContent))


USAGE_DETAIL = "usage"
"""The `details` key where a tool that asks a model itself (a subagent) puts the Usage of those
requests, so the run's totals and the chat's footer count them."""


def usage_in_details(details: Any) -> Usage | None:
    """The model usage a tool result reports in its details, if any."""
    if not isinstance(details, dict) or USAGE_DETAIL not in details:
        return None
    try:
        return usage_from_dict(details[USAGE_DETAIL])
    except CodecError:
        return None


ToolOutput: TypeAlias = list[ToolResultContent] | ToolResult
ToolUpdate = Callable[[ToolResult], Awaitable[None]]
"""Awaited by a tool to stream partial output (bash); the loop emits it in order."""


@runtime_checkable
class AgentTool(Protocol):
    """Any object with `name`, `description`, `parameters` (JSON Schema) and `execute`.

    `execute` may take any of these forms:

        async def execute(self, tool_call_id, params)
        async def execute(self, tool_call_id, params, signal=None)
        async def execute(self, tool_call_id, params, signal, on_update=None)
        async def execute(self, tool_call_id, params, signal=None, *, on_update=None)

    `params` are validated against `parameters` and copied first. `signal` is the prompt's
    AbortSignal; `on_update` (positional or keyword) is given only to tools that declare it.
    A plain `def execute` is run on a thread of its own, so a blocking tool does not freeze
    the event loop (and a stop can leave the thread behind); its `on_update` is then a plain
    function too. It returns a list of content
    or a ToolResult.
    """

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...

    @property
    def execute(self) -> Callable[..., Any]: ...


MAX_WRAPPERS = 16
"""Wrappers unwrapped at most (a wrapper that names itself would loop)."""


def unwrapped(tool: Any) -> Any:
    """The tool itself, under whatever wraps it (lazy loading, diagnostics, ...). Each wrapper
    names the tool it wraps as `wrapped`; what a tool is (its class, its workspace) is read
    from the tool this gives, so that wrapping a tool never hides it from another feature."""
    for _ in range(MAX_WRAPPERS):
        inner = getattr(tool, "wrapped", None)
        if inner is None:
            break
        tool = inner
    return tool


def own_arguments(tool: AgentTool | None, arguments: Any) -> Any:
    """A call's arguments in the tool's own names (Claude Code's `file_path` as `path`, see
    ai/foreign_names), as validation takes them: what every view of a call reads (titles,
    locations, previews, diffs, undo's bookkeeping, the output); as they are for an unknown
    tool, or one whose schema is not an object (validation then says what is wrong)."""
    schema = getattr(tool, "parameters", None)
    if not isinstance(schema, dict) or not isinstance(arguments, dict):
        return arguments
    return adopt(schema, arguments)


def call_arguments(tools: Iterable[Any], name: str, arguments: Any) -> Any:
    """`own_arguments` of the tool named `name` among `tools` (a stored call shown again)."""
    return own_arguments(next((t for t in tools if t.name == name), None), arguments)


Slot = Literal["positional", "keyword", "absent"]


@dataclass(frozen=True, slots=True)
class BoundTool:
    """How to call a tool's `execute`: always with all four values. It holds no copy of the
    tool's name, description or schema: those are read from the tool itself, as they are now."""

    tool: AgentTool
    signal_slot: Slot
    update_slot: Slot
    in_thread: bool

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None = None,
        on_update: ToolUpdate | None = None,
    ) -> ToolOutput:
        update: Callable[[ToolResult], Any] | None = on_update
        if self.in_thread and on_update is not None:
            update = _blocking(on_update, asyncio.get_running_loop())
        args: list[Any] = [tool_call_id, params]
        kwargs: dict[str, Any] = {}
        for slot, name, value in (
            (self.signal_slot, "signal", signal),
            (self.update_slot, "on_update", update),
        ):
            if slot == "positional":
                args.append(value)
            elif slot == "keyword":
                kwargs[name] = value
        if self.in_thread:
            result = await on_own_thread(functools.partial(self.tool.execute, *args, **kwargs))
        else:
            result = self.tool.execute(*args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        output: ToolOutput = result
        return output


def bind_tool(tool: AgentTool) -> BoundTool:
    """Read `tool.execute`'s form; a TypeError names a tool that no form can call."""
    execute = tool.execute
    try:
        signature = inspect.signature(execute)
    except (TypeError, ValueError) as exc:
        raise TypeError(f'Tool "{tool.name}": execute has no readable signature') from exc
    parameters = list(signature.parameters.values())
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in parameters)
    named = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}

    def slot(index: int, name: str) -> Slot:
        if name in named:  # declared by name: passed by name, wherever it stands
            return "keyword"
        if len(positional) > index or (varargs and name == "signal"):
            return "positional"
        return "absent"

    signal_slot, update_slot = slot(2, "signal"), slot(3, "on_update")
    if update_slot == "positional":  # a fourth positional parameter under another name
        signal_slot = "positional"
    args = [None] * (2 + (signal_slot == "positional") + (update_slot == "positional"))
    kwargs = {
        name: None
        for name, kind in (("signal", signal_slot), ("on_update", update_slot))
        if kind == "keyword"
    }
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(
            f'Tool "{tool.name}": execute must accept (tool_call_id, params), '
            f"optionally signal and on_update: {exc}"
        ) from None
    in_thread = not inspect.iscoroutinefunction(execute)
    return BoundTool(tool, signal_slot, update_slot, in_thread)


def _blocking(update: ToolUpdate, loop: asyncio.AbstractEventLoop) -> Callable[[ToolResult], None]:
    """`on_update` for a tool running in a worker thread: it waits until the loop emitted."""

    async def deliver(partial: ToolResult) -> None:
        await update(partial)

    def send(partial: ToolResult) -> None:
        asyncio.run_coroutine_threadsafe(deliver(partial), loop).result()

    return send


@dataclass(frozen=True, slots=True)
class FunctionTool:
    """An AgentTool made from a coroutine function `run(tool_call_id, params, signal)`."""

    name: str
    description: str
    parameters: dict[str, Any]
    run: Callable[..., Awaitable[ToolOutput]] = field(repr=False)

    async def execute(
        self, tool_call_id: str, params: dict[str, Any], signal: AbortSignal | None = None
    ) -> ToolOutput:
        return await self.run(tool_call_id, params, signal)
