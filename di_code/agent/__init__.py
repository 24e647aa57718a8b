"""The agent layer: tools protocol, events, the tool call loop and the Agent."""

from di_code.agent.agent import Agent
from di_code.agent.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from di_code.agent.loop import LoopConfig, run_agent_loop
from di_code.agent.tool import AgentTool, FunctionTool, ToolResult, ToolUpdate

__all__ = [
    "Agent",
    "AgentEndEvent",
    "AgentEvent",
    "AgentStartEvent",
    "AgentTool",
    "FunctionTool",
    "LoopConfig",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolResult",
    "ToolUpdate",
    "TurnEndEvent",
    "TurnStartEvent",
    "run_agent_loop",
]
