"""Which modules a command imports, and which guarded places it reaches, at its first use."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.cli.conftest import DI_CODE

SPY = Path(__file__).with_name("import_spy")


GUARDED = (
    "httpx",
    "httpcore",
    "anyio",
    "h11",
    "jsonschema",
    "mcp",
    "pygls",
    "lsprotocol",
    "cattrs",
    "importlib.metadata",
)
"""The packages di-code imports through di_code.system.first_use only, with the modules of the
tools built on first use (tools/builtin/support/lazy.py); pygls and its types are a language
server's start (tests/test_guarded_first_use_lsp.py); importlib.metadata finds the plugins."""


def guarded(name: str, tools: set[str]) -> bool:
    return name in tools or any(name == p or name.startswith(f"{p}.") for p in GUARDED)


def imports(lines: list[str]) -> dict[str, str]:
    """Module name → where it was first imported ("loop" or "off")."""
    found: dict[str, str] = {}
    for line in lines:
        where, name = line.split(" ", 1)
        if where in ("loop", "off"):
            found.setdefault(name, where)
    return found


def spied_run(
    args: list[str], workspace: Path, env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """`di-code ARGS` in `workspace` under the import spy: its result, and the spy's lines."""
    log = workspace.parent / "imports.log"
    env = {**env, "DI_CODE_IMPORT_SPY_LOG": str(log)}
    env["PYTHONPATH"] = os.pathsep.join([str(SPY), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [DI_CODE, *args], cwd=workspace, env=env, capture_output=True, text=True, timeout=60
    )
    return result, log.read_text(encoding="utf-8").splitlines() if log.exists() else []
