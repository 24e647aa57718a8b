"""Which MCP servers to start: `[mcp_servers.NAME]` in config.toml and a project's `.mcp.json`.

config.toml (di-code's own form; stdio servers have `command`, HTTP servers `url`):

    [mcp_servers.tracker]
    command = "tracker-mcp"
    args = ["--readonly"]
    env = { TRACKER_TOKEN = "..." }
    timeout = 30            # seconds to start and list tools, and per call
    enabled = true

    [mcp_servers.docs]
    url = "https://docs.example.com/mcp"
    headers = { Authorization = "Bearer ..." }

`.mcp.json` is Claude Code's format, `{"mcpServers": {"NAME": {"command", "args", "env"} or
{"type": "http", "url", "headers"}}}`; it is read only for a project the user trusts, since a
server is a program that runs on the user's machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from di_code.ai.codec import loads_valid

DEFAULT_TIMEOUT_S = 30.0
_NAME = re.compile(r"(?!.*__)[A-Za-z0-9_-]{0,39}[A-Za-z0-9-]")
"""Server names become part of tool names (`mcp__NAME__TOOL`), which providers restrict, and
which a rule `mcp__NAME` covers by their start: with `__` in a name, or `_` at its end, the
tools of server `fx__b` (or `fx_`) would start `mcp__fx__` as server `fx`'s do."""
_NAME_RULE = "names may use letters, digits, - and _ (at most 40; no __, no _ at the end)"


class McpServerConfig(Struct, frozen=True):
    name: str
    source: str
    """The file it came from, for messages."""
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT_S
    enabled: bool = True
    untrusted_folders: tuple[str, ...] = ()
    """The folders of the untrusted project it starts in: its command is not looked up in
    them, nor in a relative PATH entry (program_env.path_outside), so that a repository's program
    never runs under the name of the user's server."""


def well_named(
    configs: Iterable[McpServerConfig],
) -> tuple[list[McpServerConfig], list[str]]:
    """`configs` whose names may start tool names, and one warning per other: an editor's
    servers come as configs, a file's through `parse_servers`, and both are held to it."""
    kept, warnings = [], []
    for config in configs:
        if _NAME.fullmatch(config.name):
            kept.append(config)
        else:
            warnings.append(f"{config.source}: MCP server {config.name!r} ignored: {_NAME_RULE}")
    return kept, warnings


def parse_servers(raw: Any, source: str) -> tuple[list[McpServerConfig], list[str]]:
    """The servers of one `[mcp_servers]` table (or `mcpServers` object), and one warning per
    entry that is not a valid server (the others still start)."""
    if not isinstance(raw, dict):
        return [], [f"{source}: mcp_servers must be a table"] if raw is not None else []
    servers, warnings = [], []
    for name, entry in raw.items():
        try:
            servers.append(_server(str(name), entry, source))
        except ValueError as exc:
            warnings.append(f"{source}: MCP server {name!r} ignored: {exc}")
    return servers, warnings


def parse_mcp_json(path: Path, raw: bytes) -> tuple[list[McpServerConfig], list[str]]:
    """The servers of a project's `.mcp.json`, from the bytes that were found trusted."""
    try:
        data = loads_valid(raw.decode("utf-8"))
    except ValueError as exc:
        return [], [f"{path}: not valid JSON ({exc}); its MCP servers are ignored"]
    if not isinstance(data, dict):
        return [], [f"{path}: expected an object with mcpServers"]
    return parse_servers(data.get("mcpServers", {}), str(path))


def _server(name: str, entry: Any, source: str) -> McpServerConfig:
    if not _NAME.fullmatch(name):
        raise ValueError(_NAME_RULE)
    if not isinstance(entry, dict):
        raise ValueError("expected a table")
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        raise ValueError("give either command (stdio) or url (streamable HTTP)")
    if command is not None and not isinstance(command, str):
        raise ValueError("command must be a string")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise ValueError("url must be an http:// or https:// URL")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ValueError("timeout must be a positive number of seconds")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError("cwd must be a string")
    return McpServerConfig(
        name,
        source,
        command,
        tuple(_strings(entry.get("args", []), "args")),
        _string_map(entry.get("env", {}), "env"),
        cwd,
        url,
        _string_map(entry.get("headers", {}), "headers"),
        float(timeout),
        bool(entry.get("enabled", True)),
    )


def _strings(value: Any, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{key} must be a list of strings")
    return value


def _string_map(value: Any, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{key} must be a table of strings")
    return {str(k): v for k, v in value.items()}
