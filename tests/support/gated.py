"""Tools as the agent loop runs them under a permission gate: each call goes through the
loop's own `run_tool_call`, with the gate as its before hook."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from di_code.agent import AgentTool, ToolHooks, ToolResult, ToolUpdate
from di_code.agent.tool_call import run_tool_call
from di_code.ai import AbortController, AbortSignal
from di_code.ai.types import ToolCall
from di_code.tools.policy.modes import offered_tools
from di_code.tools.policy.permissions import PermissionGate


@dataclass(frozen=True, slots=True)
class LoopCall:
    """A tool called the way the loop calls it: validated, gated, normalised."""

    tool: AgentTool
    gate: PermissionGate

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def description(self) -> str:
        return self.tool.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self.tool.parameters

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None = None,
        on_update: ToolUpdate | None = None,
    ) -> ToolResult:
        hooks = ToolHooks(before=[self.gate.before_tool_call])
        call = ToolCall(tool_call_id, self.tool.name, params)
        return await run_tool_call(
            call, self.tool, signal or AbortController().signal, hooks, on_update
        )


def gate_tools(tools: Sequence[AgentTool], gate: PermissionGate) -> list[LoopCall]:
    """The tools the model is offered in the gate's mode, each called as the loop does."""
    return [LoopCall(tool, gate) for tool in offered_tools(tools, gate.mode)]
