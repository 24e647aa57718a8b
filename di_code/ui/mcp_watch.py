"""The chat's MCP servers start in the background, so the prompt never waits for them: each
server's tools join the agent (gated like the others) once it is ready, for the next prompt;
a server that fails says so once; the status line counts the ready ones."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from di_code.tools.mcp import failure
from di_code.tools.permissions import gate_tools
from di_code.ui.safe_text import visible

if TYPE_CHECKING:
    from di_code.tools.mcp import McpServers
    from di_code.ui.repl import Repl


async def watch_mcp(repl: Repl, servers: McpServers) -> None:
    """Until every launched server is ready or failed (the REPL cancels it at the end)."""
    async for server in servers.settled():
        if server.state == "failed":
            repl.console.print(Text(f"✗ {visible(failure(server))}", style="red"))
        tools = servers.new_tools()
        if tools:
            gate = repl.setup.gate
            repl.agent.add_tools(tools if gate is None else gate_tools(tools, gate))
        repl.invalidate()
