"""The chat's MCP servers start in the background, so the prompt never waits for them: each
server's tools join the agent once it is ready, from the next request (a running prompt's too);
a server that fails says so once; the status line counts the ready ones."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from di_code.system.safe_text import visible
from di_code.tools.extensions.mcp import failure
from di_code.tools.policy.modes import session_tools

if TYPE_CHECKING:
    from di_code.tools.extensions.mcp import McpServers
    from di_code.ui.chat_view import ChatView


async def watch_mcp(repl: ChatView, servers: McpServers) -> None:
    """Until every launched server is ready or failed (the REPL cancels it at the end)."""
    async for server in servers.settled():
        if server.state == "failed":
            repl.console.print(Text(f"✗ {visible(failure(server))}", style="red"))
        tools = servers.new_tools(taken=[tool.name for tool in repl.agent.tools])
        gate = repl.setup.gate
        offered = tools if gate is None else session_tools(tools, gate.mode)
        if offered:
            repl.agent.add_tools(offered)
        repl.invalidate()
