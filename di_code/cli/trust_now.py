"""Trust given inside a chat (`/trust`, or `y` to the first-run question) applies at once.

The settings are read again as now trusted: the project's MCP servers start (the others are
restarted only if the set of servers changed) and their tools are offered from the next
request; the permission rules and, unless a flag chose it, the permission mode become the
trusted file's. The model, providers and limits stay as the chat started (a running
conversation does not change model under the user's feet); they apply from the next start.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from di_code.config.settings import load_settings
from di_code.setup.flags import CliOptions
from di_code.setup.mcp import mcp_configs
from di_code.setup.prepare import permission_mode
from di_code.setup.prepared import Prepared
from di_code.tools.policy.modes import session_tools
from di_code.tools.policy.permissions import PermissionRules


def trust_applier(prepared: Prepared, options: CliOptions) -> Callable[[], Awaitable[list[str]]]:
    """The chat's `apply_trust`: re-reads the settings and applies them to `prepared`."""

    async def apply() -> list[str]:
        lines: list[str] = []
        settings = load_settings(prepared.home, prepared.workspace)
        gate = prepared.gate
        assert gate is not None  # `prepare` always makes one; only the chat's tests have none
        gate.rules = PermissionRules.parse(settings.allow, settings.deny)
        mode = permission_mode(options, settings)
        if mode != gate.mode:
            lines += [f"Permission mode: {mode}.", *gate.switch(mode)]
        configs = mcp_configs(settings, prepared.home, prepared.workspace, lines.append)
        running = [server.config for server in prepared.mcp.servers] if prepared.mcp else []
        enabled = [config for config in configs if config.enabled]
        if enabled == running:
            return lines
        stopped = set()
        if prepared.mcp is not None:
            stopped = {tool.name for tool in prepared.mcp.tools()}
            await prepared.mcp.aclose()
        from di_code.tools.extensions.mcp import McpServers

        prepared.mcp = McpServers(configs)
        lines += await prepared.mcp.start()
        kept = [tool for tool in prepared.agent.tools if tool.name not in stopped]
        fresh = prepared.mcp.tools(taken=[tool.name for tool in kept])
        offered = session_tools(fresh, gate.mode)
        prepared.agent.tools = [*kept, *offered]
        names = ", ".join(tool.name for tool in offered) or "none"
        lines.append(f"MCP servers started; their tools: {names}.")
        return lines

    return apply
