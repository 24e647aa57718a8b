"""AgentEvents: what the loop reports to the UI, the session writer and the JSON output."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias

from di_code.agent.tool import ToolResult
from di_code.ai.events import StreamEvent
from di_code.ai.types import AssistantMessage, Message, ToolResultMessage


@dataclass(frozen=True, slots=True)
class AgentStartEvent:
    type: ClassVar[Literal["agent_start"]] = "agent_start"


@dataclass(frozen=True, slots=True)
class TurnStartEvent:
    type: ClassVar[Literal["turn_start"]] = "turn_start"


@dataclass(frozen=True, slots=True)
class MessageStartEvent:
    """For an assistant message, `message` is an empty preview; message_end has the real one."""

    message: Message
    type: ClassVar[Literal["message_start"]] = "message_start"


@dataclass(frozen=True, slots=True)
class MessageUpdateEvent:
    event: StreamEvent
    type: ClassVar[Literal["message_update"]] = "message_update"


@dataclass(frozen=True, slots=True)
class MessageEndEvent:
    message: Message
    type: ClassVar[Literal["message_end"]] = "message_end"


@dataclass(frozen=True, slots=True)
class ToolExecutionStartEvent:
    tool_call_id: str
    tool_name: str
    arguments: Any
    type: ClassVar[Literal["tool_execution_start"]] = "tool_execution_start"


@dataclass(frozen=True, slots=True)
class ToolExecutionUpdateEvent:
    tool_call_id: str
    tool_name: str
    partial_result: ToolResult
    type: ClassVar[Literal["tool_execution_update"]] = "tool_execution_update"


@dataclass(frozen=True, slots=True)
class ToolExecutionEndEvent:
    tool_call_id: str
    tool_name: str
    result: ToolResultMessage
    type: ClassVar[Literal["tool_execution_end"]] = "tool_execution_end"


@dataclass(frozen=True, slots=True)
class TurnEndEvent:
    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    type: ClassVar[Literal["turn_end"]] = "turn_end"


@dataclass(frozen=True, slots=True)
class AgentEndEvent:
    """`messages` are the messages this prompt added to the transcript."""

    messages: list[Message]
    type: ClassVar[Literal["agent_end"]] = "agent_end"


AgentEvent: TypeAlias = (
    AgentStartEvent
    | TurnStartEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | TurnEndEvent
    | AgentEndEvent
)
