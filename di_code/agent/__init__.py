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
from di_code.agent.prompt_hooks import PromptBlocked, PromptHooks
from di_code.agent.tool import AgentTool, FunctionTool, ToolResult, ToolUpdate
from di_code.agent.tool_call import AfterToolCall, BeforeToolCall, ToolCallContext, ToolHooks

__all__ = [
    "AfterToolCall",
    "Agent",
    "AgentEndEvent",
    "AgentEvent",
    "AgentStartEvent",
    "AgentTool",
    "BeforeToolCall",
    "FunctionTool",
    "LoopConfig",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "PromptBlocked",
    "PromptHooks",
    "ToolCallContext",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolHooks",
    "ToolResult",
    "ToolUpdate",
    "TurnEndEvent",
    "TurnStartEvent",
    "run_agent_loop",
]
