"""Ending a task's process and every process it started, however they were grouped.

bash's commands run in process groups of their own, and a process whose parent dies is
handed to a reaper: so the tree is read from /proc *before* anything is signalled, the task's
process (di_code.cli.batch_child, which passes the signal on to `run` and kills what `run`
left) is asked to stop, and after a grace period whatever of that tree still runs is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

from di_code.system.children import descendants

GRACE_SECONDS = 3.0


def end_process_tree(process: subprocess.Popen[bytes], grace: float = GRACE_SECONDS) -> None:
    """Stop `process` (a session leader) and everything below it; waits until it is gone."""
    tree = descendants(process.pid)
    with contextlib.suppress(OSError):  # the task's keeper passes it on to `run`, once
        os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        tree += descendants(process.pid)
    _signal_group(process.pid, signal.SIGKILL)
    for pid in tree:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    process.wait()


def _signal_group(pgid: int, number: signal.Signals) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pgid, number)
