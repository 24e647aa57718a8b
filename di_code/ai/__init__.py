"""Provider-agnostic protocol: types, stream events, the stream object, abort and validation.

The public names are exported lazily (PEP 562 `__getattr__`): importing one submodule, say
`di_code.ai.types` for a type alias, must not load asyncio, the stream machinery and the
validator with it, or `di-code --help` pays for all of them. Type checkers see the plain
imports below.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from di_code.ai.abort import AbortController, AbortSignal
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
    from di_code.ai.stream import AssistantMessageStream, Provider, ProviderError, StreamOptions
    from di_code.ai.types import (
        AssistantMessage,
        Context,
        Cost,
        ImageContent,
        Message,
        Model,
        ModelCost,
        TextContent,
        ThinkingContent,
        ToolCall,
        ToolDefinition,
        ToolResultMessage,
        Usage,
        UserMessage,
    )
    from di_code.ai.validation import ToolArgumentsError, validate_tool_arguments

_SOURCES: dict[str, tuple[str, ...]] = {
    "abort": ("AbortController", "AbortSignal"),
    "events": (
        "DoneEvent",
        "ErrorEvent",
        "RetryEvent",
        "StartEvent",
        "StreamEvent",
        "TextDeltaEvent",
        "TextEndEvent",
        "TextStartEvent",
        "ThinkingDeltaEvent",
        "ThinkingEndEvent",
        "ThinkingStartEvent",
        "ToolCallDeltaEvent",
        "ToolCallEndEvent",
        "ToolCallStartEvent",
    ),
    "stream": ("AssistantMessageStream", "Provider", "ProviderError", "StreamOptions"),
    "types": (
        "AssistantMessage",
        "Context",
        "Cost",
        "ImageContent",
        "Message",
        "Model",
        "ModelCost",
        "TextContent",
        "ThinkingContent",
        "ToolCall",
        "ToolDefinition",
        "ToolResultMessage",
        "Usage",
        "UserMessage",
    ),
    "validation": ("ToolArgumentsError", "validate_tool_arguments"),
}
_MODULE_OF = {name: module for module, names in _SOURCES.items() for name in names}

__all__ = [
    "AbortController",
    "AbortSignal",
    "AssistantMessage",
    "AssistantMessageStream",
    "Context",
    "Cost",
    "DoneEvent",
    "ErrorEvent",
    "ImageContent",
    "Message",
    "Model",
    "ModelCost",
    "Provider",
    "ProviderError",
    "RetryEvent",
    "StartEvent",
    "StreamEvent",
    "StreamOptions",
    "TextContent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingContent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingStartEvent",
    "ToolArgumentsError",
    "ToolCall",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolDefinition",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "validate_tool_arguments",
]

if not TYPE_CHECKING:  # hidden from type checkers, so a misspelt name is still an error

    def __getattr__(name: str) -> object:
        module = _MODULE_OF.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
