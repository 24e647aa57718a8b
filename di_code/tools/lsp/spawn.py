"""How a language server is started: through the children door (di_code.ai.children), in a
process group of its own with PR_SET_PDEATHSIG, so it dies with di-code however di-code ends,
and with the environment bash's commands get (no provider keys)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Collection, Sequence
from pathlib import Path

from di_code.ai.children import signal_group, start_child
from di_code.tools.policy.program_env import program_env


async def start_server(
    argv: Sequence[str], cwd: Path, hidden: Collection[str]
) -> asyncio.subprocess.Process:
    """The server's process, its stdin and stdout piped, stderr discarded (nobody reads it,
    and a full pipe would stall the server), its environment without the `hidden` variables
    (the provider keys: program_env); OSError when it cannot start."""
    return await start_child(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=cwd,
        env=program_env(hidden),
    )


def kill_group(pid: int) -> None:
    """SIGKILL the server's whole group (what it started too); gone already is fine."""
    signal_group(pid, signal.SIGKILL)
