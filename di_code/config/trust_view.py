"""What trusting a project would let through, value by value, for the trust question: each
setting held back from its settings file (`key = value`: the URL, the rule, the command, not
only its name), and each MCP server of its `.mcp.json` as written (the program and arguments
it would start, or the URL it would connect to)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any


def dotted(prefix: str, key: str) -> str:
    """A key's dotted path, the key quoted when it is not a plain word."""
    return prefix + (key if key.replace("_", "a").isalnum() else json.dumps(key))


def held_back_values(document: Mapping[str, Any], held: list[str]) -> list[str]:
    """`key = value` for each of the dotted keys `held` in the settings `document`."""
    wanted = set(held)
    return [f"{path} = {_shown(value)}" for path, value in _leaves(document) if path in wanted]


def mcp_json_servers(path: Path) -> list[str]:
    """`name: {entry}` for each server of a `.mcp.json`, as written in it."""
    try:
        servers = json.loads(path.read_text(encoding="utf-8")).get("mcpServers")
    except (OSError, ValueError, AttributeError):
        return [f"{path} cannot be read as JSON: nothing in it would start"]
    if not isinstance(servers, dict) or not servers:
        return ["(no servers)"]
    return [f"{name}: {_shown(entry)}" for name, entry in servers.items()]


def _leaves(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        path = dotted(prefix, key)
        if isinstance(value, dict):
            yield from _leaves(value, f"{path}.")
        else:
            yield path, value


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
