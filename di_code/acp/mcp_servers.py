"""The MCP servers an editor passes with `session/new`, as di-code's own server configs: the
user set them up in their editor, so they start like the user's configured ones (stdio and
HTTP; SSE is not offered)."""

from __future__ import annotations

from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio

from di_code.tools.extensions.mcp_config import McpServerConfig

SOURCE = "the editor"


def mcp_configs(servers: list[Any]) -> tuple[McpServerConfig, ...]:
    configs: list[McpServerConfig] = []
    for server in servers:
        if isinstance(server, McpServerStdio):
            env = {variable.name: variable.value for variable in server.env}
            configs.append(
                McpServerConfig(
                    server.name, SOURCE, command=server.command, args=tuple(server.args), env=env
                )
            )
        elif isinstance(server, HttpMcpServer):
            headers = {header.name: header.value for header in server.headers}
            configs.append(McpServerConfig(server.name, SOURCE, url=server.url, headers=headers))
    return tuple(configs)
