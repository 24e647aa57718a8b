"""The session's MCP servers: which are configured (the user's, a trusted project's
`.mcp.json`, an editor's), started or launched in the background, and `di-code mcp list`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import structs

from di_code.config.settings import Settings, di_code_home
from di_code.config.settings import load_settings as load_settings_files
from di_code.config.trust import project_trusted, trusted_mcp_json
from di_code.setup.prepared import Notify

if TYPE_CHECKING:
    from di_code.tools.extensions.mcp import McpServers
    from di_code.tools.extensions.mcp_config import McpServerConfig


async def start_mcp_servers(
    settings: Settings,
    home: Path,
    workspace: Path,
    notify: Notify,
    extra: Sequence[McpServerConfig] = (),
    *,
    wait: bool = True,
) -> McpServers | None:
    """The configured MCP servers and `extra` ones (an editor's), started (launched only,
    without `wait`), or None (the SDK is then never imported). A project's `.mcp.json`
    counts only when the user trusts it."""
    given = users_here(editors(extra, notify), home, workspace)
    configs = [*mcp_configs(settings, home, workspace, notify), *given]
    if not configs:
        return None
    from di_code.tools.extensions.mcp import McpServers

    servers = McpServers(configs)
    if not wait:
        servers.launch()
        return servers
    for line in await servers.start():
        notify(line)
    return servers


def mcp_configs(
    settings: Settings, home: Path, workspace: Path, notify: Notify
) -> list[McpServerConfig]:
    """The servers of the settings and of the project's `.mcp.json` if trusted as it is."""
    from di_code.tools.extensions.mcp_config import parse_mcp_json, parse_servers

    configs, warnings = parse_servers(settings.mcp_servers, "config.toml")
    configs = users_here(configs, home, workspace)
    project_file, data, why_not = trusted_mcp_json(home, workspace)
    if project_file is not None and data is not None:
        more, problems = parse_mcp_json(project_file, data)
        configs, warnings = [*configs, *more], [*warnings, *problems]
    for line in [*warnings, *([why_not] if why_not else [])]:
        notify(line)
    return configs


def editors(configs: Sequence[McpServerConfig], notify: Notify) -> list[McpServerConfig]:
    """An editor's servers, held to the name rule a file's are held to."""
    if not configs:
        return []
    from di_code.tools.extensions.mcp_config import well_named

    kept, warnings = well_named(configs)
    for line in warnings:
        notify(line)
    return kept


def users_here(
    configs: Sequence[McpServerConfig], home: Path, workspace: Path
) -> list[McpServerConfig]:
    """The user's servers (config.toml's, an editor's) as they start in this project: in one
    the user has not trusted, none is looked up in the project's folder (a `PATH` entry into it,
    or a relative one, would run the repository's program under the server's name)."""
    if not configs or project_trusted(home, workspace):
        return list(configs)
    folder = (str(workspace.resolve()),)
    return [structs.replace(config, untrusted_folders=folder) for config in configs]


async def mcp_status_lines(notify: Notify, workspace: Path | None = None) -> list[str]:
    """`di-code mcp list`: each configured server's state and tools, after starting it."""
    home, workspace = di_code_home(), (workspace or Path.cwd()).resolve()
    settings = load_settings_files(home, workspace)
    servers = await start_mcp_servers(settings, home, workspace, notify)
    if servers is None:
        return ["No MCP servers configured."]
    try:
        return servers.status_lines()
    finally:
        await servers.aclose()
