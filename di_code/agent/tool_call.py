"""One tool call, from the model's proposal to the result the model sees.

The loop's seam for everything that is not the tool itself (pi's `beforeToolCall` and
`afterToolCall`): a `before` hook is asked once the arguments are valid and may refuse the call
with a reason for the model (permissions, approval, the sandbox choice); an `after` hook sees
the result and may replace it (redaction, checkpoint bookkeeping). User hooks will plug in here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from msgspec import Struct

from di_code.agent.tool import AgentTool, ToolResult, ToolUpdate, bind_tool
from di_code.ai.types import TextContent, ToolCall
from di_code.ai.validation import checked_tool_arguments
from di_code.system.abort import AbortSignal
from di_code.system.left_behind import LeftBehind, unless_aborted

INTERRUPTED_TOOL_TEXT = "Interrupted by the user."
"""An aborted call's result: the model must know the user stopped it, not that it failed."""
NOT_RUN_TOOL_TEXT = "Not run: the user interrupted before this tool call started."
ABORTED_QUESTION_TEXT = "Operation aborted"
LISTENING_GRACE = 0.5
"""Seconds a tool has after an abort to return its own result (bash: its output and how its
process group was stopped); a tool still running then is left behind."""


class ToolCallContext(Struct, frozen=True):
    """What a hook knows of a call: the model's call, its validated arguments and the tool."""

    call: ToolCall
    params: dict[str, Any]
    tool: AgentTool
    signal: AbortSignal
    conversation: object = None
    """The conversation the call is made in (the Agent; a subagent is one of its own): a hook
    that remembers what it told the model keys on it, since one set of hooks serves the main
    conversation and every subagent's. None: a call outside any agent."""


BeforeToolCall = Callable[[ToolCallContext], Awaitable[str | None]]
"""Returns None to let the call run, or the refusal the model reads instead of a result."""
AfterToolCall = Callable[[ToolCallContext, ToolResult], Awaitable[ToolResult]]
"""Returns the result the model gets (the one it was given, or a replacement)."""


class ToolHooks(Struct, frozen=True):
    """Hooks run in order: the first refusal wins; each `after` gets the last one's result."""

    before: Sequence[BeforeToolCall] = ()
    after: Sequence[AfterToolCall] = ()


NO_HOOKS = ToolHooks()


async def run_tool_call(
    call: ToolCall,
    tool: AgentTool | None,
    signal: AbortSignal,
    hooks: ToolHooks = NO_HOOKS,
    on_update: ToolUpdate | None = None,
    conversation: object = None,
) -> ToolResult:
    """The result of `call`: unknown tools, invalid arguments, refusals and raising tools all
    become error results the model reads, so the run goes on."""
    if signal.aborted:
        return _error(NOT_RUN_TOOL_TEXT)
    if tool is None:
        return _error(f'Unknown tool "{call.name}".')
    try:
        params = await checked_tool_arguments(tool, call.arguments)
    except Exception as exc:
        return _failed(call, exc)
    context = ToolCallContext(call, params, tool, signal, conversation)
    for before in hooks.before:
        refusal = await _until_aborted(_refusal(before, context), signal)
        if refusal is not None:
            return _error(refusal)
    result = await _execute(context, on_update)
    for after in hooks.after:
        result = await after(context, result)
    return result


async def _refusal(before: BeforeToolCall, context: ToolCallContext) -> str | None:
    """A hook that fails refuses: a check that could not be made is no permission."""
    try:
        return await before(context)
    except Exception as exc:
        return f'Tool "{context.call.name}" was not run: {str(exc) or type(exc).__name__}'


async def _until_aborted(check: Awaitable[str | None], signal: AbortSignal) -> str | None:
    """The hook's answer, unless an abort comes first (a question must not block Ctrl-C)."""
    try:
        return await unless_aborted(check, signal)
    except LeftBehind:
        return ABORTED_QUESTION_TEXT


async def _execute(context: ToolCallContext, on_update: ToolUpdate | None) -> ToolResult:
    call, signal = context.call, context.signal
    latest: list[ToolResult] = []
    left = False

    async def update(partial: ToolResult) -> None:
        if left:  # the call has its result: a tool left behind streams to nobody
            return
        latest[:] = [partial]  # what the user saw last, if the call is interrupted
        if on_update is not None:
            await on_update(partial)

    execution = bind_tool(context.tool).execute(call.id, context.params, signal, update)
    try:
        output = await unless_aborted(execution, signal, LISTENING_GRACE)
    except LeftBehind:  # the tool did not listen: it goes on alone, its result unwanted
        left = True
        return _interrupted(latest[-1] if latest else None)
    except Exception as exc:
        if signal.aborted:
            return _interrupted(latest[-1] if latest else None)
        return _failed(call, exc)
    if isinstance(output, list | tuple):
        output = ToolResult(list(output))
    if signal.aborted:
        return _interrupted(output if isinstance(output, ToolResult) else None)
    if isinstance(output, ToolResult):
        return output
    kind = type(output).__name__
    return _error(f'Tool "{call.name}" failed: it returned {kind}, not a list of content')


def _interrupted(output: ToolResult | None) -> ToolResult:
    """The user stopped the call: said first, then whatever output it had by then."""
    texts = [] if output is None else [b.text for b in output.content if isinstance(b, TextContent)]
    so_far = "\n".join(texts).strip()
    details = None if output is None else output.details  # a subagent's transcript and usage
    if not so_far:
        return ToolResult([TextContent(INTERRUPTED_TOOL_TEXT)], details, is_error=True)
    return ToolResult(
        [TextContent(f"{INTERRUPTED_TOOL_TEXT}\nOutput so far:\n{so_far}")], details, True
    )


def _failed(call: ToolCall, exc: Exception) -> ToolResult:
    return _error(f'Tool "{call.name}" failed: {str(exc) or type(exc).__name__}')


def _error(text: str) -> ToolResult:
    return ToolResult([TextContent(text)], is_error=True)
