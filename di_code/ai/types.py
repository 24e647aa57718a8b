"""Provider-agnostic data: content blocks, messages, usage, models and request context.

Content, messages, usage and the request context are frozen msgspec Structs (built in C at
import; a frozen slots dataclass generates and compiles its methods per class, on the start-up
path); change one with `msgspec.structs.replace`. The models, read from settings,
stay frozen dataclasses. The type tag (`type` for content, `role` for messages) is a class
constant, so positional construction stays natural (`TextContent("hi")`) while the JSON codec
(`di_code.ai.codec`) still writes the tag first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar, Literal, TypeAlias

import msgspec
from msgspec import Struct

StopReason: TypeAlias = Literal["stop", "length", "tool_use", "error", "aborted"]
ReasoningLevel: TypeAlias = Literal["off", "low", "medium", "high"]
Clock: TypeAlias = Callable[[], int]


def now_ms() -> int:
    """Wall-clock time in milliseconds, the unit of every timestamp di-code writes."""
    return int(time.time() * 1000)


class TextContent(Struct, frozen=True):
    text: str
    type: ClassVar[Literal["text"]] = "text"


class ThinkingContent(Struct, frozen=True):
    thinking: str
    signature: str | None = None
    type: ClassVar[Literal["thinking"]] = "thinking"


class ImageContent(Struct, frozen=True):
    data: str
    """Base64, without a data: prefix."""
    mime_type: str
    type: ClassVar[Literal["image"]] = "image"


class ToolCall(Struct, frozen=True):
    id: str
    name: str
    arguments: Any
    """Normally a dict. When a model sends argument text that is not valid JSON the provider
    keeps that text as a string, so validation can tell the model what went wrong."""
    signature: str | None = None
    """Opaque data the provider wants back with this call on the next request (Gemini's
    thought signature); None for the providers that need none."""
    type: ClassVar[Literal["tool_call"]] = "tool_call"


UserContent: TypeAlias = TextContent | ImageContent
AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall
ToolResultContent: TypeAlias = TextContent | ImageContent
Content: TypeAlias = TextContent | ThinkingContent | ImageContent | ToolCall


class Cost(Struct, frozen=True):
    """US dollars."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.total + other.total,
        )


class Usage(Struct, frozen=True):
    """One request's tokens and cost; the only place usage is summed (`a + b`, `sum(...)`)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: Cost = msgspec.field(default_factory=Cost)

    @property
    def sent(self) -> int:
        """Tokens of the request: fresh input plus what was read from or written to cache."""
        return self.input + self.cache_read + self.cache_write

    @property
    def context(self) -> int:
        """Tokens of the request and its answer: how full the context window is after it."""
        return self.sent + self.output

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.total_tokens + other.total_tokens,
            self.cost + other.cost,
        )


class UserMessage(Struct, frozen=True):
    content: list[UserContent]
    timestamp: int = msgspec.field(default_factory=now_ms)
    role: ClassVar[Literal["user"]] = "user"

    @classmethod
    def of(cls, prompt: str | list[UserContent], timestamp: int | None = None) -> UserMessage:
        """Build from a plain string (one TextContent) or a content list."""
        content: list[UserContent] = (
            [TextContent(prompt)] if isinstance(prompt, str) else list(prompt)
        )
        return cls(content, now_ms() if timestamp is None else timestamp)


class AssistantMessage(Struct, frozen=True):
    content: list[AssistantContent]
    provider: str
    model: str
    usage: Usage = msgspec.field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    timestamp: int = msgspec.field(default_factory=now_ms)
    error_message: str | None = None
    role: ClassVar[Literal["assistant"]] = "assistant"

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [block for block in self.content if isinstance(block, ToolCall)]

    @property
    def text(self) -> str:
        """The visible answer: every text block, joined."""
        return "".join(block.text for block in self.content if isinstance(block, TextContent))


class ToolResultMessage(Struct, frozen=True):
    tool_call_id: str
    tool_name: str
    content: list[ToolResultContent]
    is_error: bool = False
    timestamp: int = msgspec.field(default_factory=now_ms)
    details: Any = None
    """JSON for the UI and the session (a diff, a spill-file path); never sent to a model."""
    role: ClassVar[Literal["tool_result"]] = "tool_result"

    @property
    def text(self) -> str:
        return "".join(block.text for block in self.content if isinstance(block, TextContent))


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage


class ModelCost(msgspec.Struct, frozen=True):
    """US dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


class Model(msgspec.Struct, frozen=True):
    id: str
    name: str
    provider: str
    api: str
    context_window: int = 128_000
    max_output_tokens: int = 16_384
    reasoning: bool = False
    input: frozenset[str] = frozenset({"text"})
    cost: ModelCost = msgspec.field(default_factory=ModelCost)
    base_url: str | None = None


class ToolDefinition(Struct, frozen=True):
    """What a model sees of a tool: never the code that runs it."""

    name: str
    description: str
    parameters: dict[str, Any]


class Context(Struct, frozen=True):
    system_prompt: str | None
    messages: list[Message]
    tools: list[ToolDefinition] = msgspec.field(default_factory=list)


def compute_cost(model: Model, usage: Usage) -> Usage:
    """Fill `usage.cost` from the model's per-million prices."""
    price = model.cost
    parts = (
        usage.input * price.input / 1e6,
        usage.output * price.output / 1e6,
        usage.cache_read * price.cache_read / 1e6,
        usage.cache_write * price.cache_write / 1e6,
    )
    cost = Cost(parts[0], parts[1], parts[2], parts[3], sum(parts))
    return Usage(
        usage.input,
        usage.output,
        usage.cache_read,
        usage.cache_write,
        usage.total_tokens or usage.context,
        cost,
    )
