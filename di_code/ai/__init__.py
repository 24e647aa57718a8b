"""The provider-agnostic model protocol: types, stream events, the stream object and argument
validation, with the abort signal a stream takes (di_code.system.abort) named here too.

The public names are the imports below, exported lazily (di_code.system.lazy_exports): importing
one submodule, say `di_code.ai.types` for a type alias, must not load asyncio, the stream
machinery and the validator with it, or `di-code --help` pays for all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    from di_code.system.abort import AbortController, AbortSignal
else:  # hidden from type checkers, so a misspelt name is still an error
    from di_code.system.lazy_exports import lazy_exports

    __getattr__, __dir__ = lazy_exports(__name__, __file__)
