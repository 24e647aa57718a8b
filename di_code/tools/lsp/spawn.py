"""How a language server is started: in a process group of its own, with PR_SET_PDEATHSIG
(Linux), so it dies with di-code however di-code ends; the group is killed at exit.

di-code's other children are started the same way (batch's tasks, bash); when one shared
door for children exists, this module is where the server goes through it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import signal
import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from di_code.tools.policy.program_env import program_env

PR_SET_PDEATHSIG = 1
_groups: set[int] = set()


async def start_server(
    argv: Sequence[str], cwd: Path, hidden: Collection[str]
) -> asyncio.subprocess.Process:
    """The server's process, its stdin and stdout piped, stderr discarded (nobody reads it,
    and a full pipe would stall the server), its environment without the `hidden` variables
    (the provider keys: program_env); OSError when it cannot start."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=cwd,
        env=program_env(hidden),
        start_new_session=True,
        preexec_fn=_dies_with_parent(),
    )
    _kill_at_exit()
    _groups.add(process.pid)
    return process


def kill_group(pid: int) -> None:
    """SIGKILL the server's whole group (what it started too); gone already is fine."""
    _groups.discard(pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _kill_all() -> None:
    for pid in list(_groups):
        kill_group(pid)


@functools.cache
def _kill_at_exit() -> None:
    atexit.register(_kill_all)


def _dies_with_parent() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl, parent = ctypes.CDLL(None, use_errno=True).prctl, os.getpid()

    def in_child() -> None:  # between fork and exec: no imports, no locks
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)

    return in_child
