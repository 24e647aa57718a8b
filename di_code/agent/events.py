"""AgentEvents: what the loop reports to the UI, the session writer and the JSON output.

Frozen msgspec Structs, as the stream events are (`di_code.ai.events` says why).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypeAlias

from msgspec import Struct

from di_code.agent.tool import ToolResult
from di_code.ai.events import StreamEvent
from di_code.ai.types import AssistantMessage, Message, ToolResultMessage


class AgentStartEvent(Struct, frozen=True):
    type: ClassVar[Literal["agent_start"]] = "agent_start"


class TurnStartEvent(Struct, frozen=True):
    type: ClassVar[Literal["turn_start"]] = "turn_start"


class MessageStartEvent(Struct, frozen=True):
    """For an assistant message, `message` is an empty preview; message_end has the real one."""

    message: Message
    type: ClassVar[Literal["message_start"]] = "message_start"


class MessageUpdateEvent(Struct, frozen=True):
    event: StreamEvent
    type: ClassVar[Literal["message_update"]] = "message_update"


class MessageEndEvent(Struct, frozen=True):
    message: Message
    type: ClassVar[Literal["message_end"]] = "message_end"


class ToolExecutionStartEvent(Struct, frozen=True):
    tool_call_id: str
    tool_name: str
    arguments: Any
    type: ClassVar[Literal["tool_execution_start"]] = "tool_execution_start"


class ToolExecutionUpdateEvent(Struct, frozen=True):
    tool_call_id: str
    tool_name: str
    partial_result: ToolResult
    type: ClassVar[Literal["tool_execution_update"]] = "tool_execution_update"


class ToolExecutionEndEvent(Struct, frozen=True):
    tool_call_id: str
    tool_name: str
    result: ToolResultMessage
    type: ClassVar[Literal["tool_execution_end"]] = "tool_execution_end"


class TurnEndEvent(Struct, frozen=True):
    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    type: ClassVar[Literal["turn_end"]] = "turn_end"


class AgentEndEvent(Struct, frozen=True):
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
