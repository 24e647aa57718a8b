"""A stdio MCP server for the tests, and the TOML table that configures it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def stdio_server(name: str, markers: Path) -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_fixture_server", "stdio"],
        "cwd": str(ROOT),
        "env": {"MCP_FIXTURE_DIR": str(markers), "MCP_FIXTURE_NAME": name},
    }


def scripted_server(
    name: str, markers: Path, tools: list[dict[str, object]], **env: str
) -> dict[str, object]:
    """The fixture's `scripted` server offering `tools` (mcp_fixture_server.SCRIPTED), with
    more variables in its environment (`MCP_FIXTURE_LIST_DELAY`...)."""
    server = stdio_server(name, markers)
    fixture_env = server["env"]
    assert isinstance(fixture_env, dict)
    return {
        **server,
        "args": ["-m", "tests.support.mcp_fixture_server", "scripted"],
        "env": {**fixture_env, "MCP_FIXTURE_TOOLS": json.dumps(tools), **env},
    }


def toml_table(name: str, table: dict[str, object]) -> str:
    """`[mcp_servers.NAME]` with the table's keys; a dict value (`env`, `headers`) inline."""
    lines = [f"[mcp_servers.{name}]"]
    for key, value in table.items():
        if isinstance(value, dict):
            pairs = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in value.items())
            lines.append(f"{key} = {{ {pairs} }}")
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    folder = tmp_path / "markers"
    folder.mkdir()
    return folder
