"""A task's check: the shell command of its `check` field, run in its checkout once the task
has ended, whose exit status is the result's `passed` (0: true). It is what makes a batch an
evaluation: the model's own answer says what it believes, the check what holds.

The check runs after the patch is taken (what it writes, a test cache, is no part of the
task's work), as the user's command: `bash -c` in the checkout with the task's environment,
through the launcher (unsandboxed, as CI would run it). Its output (stdout and stderr) goes
to a file without a name (a check that prints the provider's key leaves it nowhere), whose
end the result keeps, redacted. It has the task's timeout (or CHECK_TIMEOUT) of its own; a
check that does not end within it fails, and one the batch's stop interrupts has no verdict.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from di_code.ai.redaction import redact
from di_code.system.children import kill_tree

STOP_GRACE = 3.0
"""How long a task's or a check's process has, once asked to stop, before it and all it
started are killed (a task's keeper, di_code.cli.batch_child, passes the stop on to `run`)."""
CHECK_TIMEOUT = 600.0
"""Seconds a check may run when its task names no timeout."""
OUTPUT_CHARS = 2_000
"""The end of the check's output kept in the result (all of it stays in its log)."""
POLL_SECONDS = 0.1


@dataclass(frozen=True, slots=True)
class Verdict:
    passed: bool | None
    """None: the batch was stopped before the check ended."""
    output: str


def run_check(
    command: str,
    cwd: Path,
    env: Mapping[str, str],
    folder: Path,
    stop: threading.Event,
    timeout: float | None,
) -> Verdict:
    """Run `command` in `cwd` until it ends, the stop is set or `timeout` passes; its output
    is kept in `folder` (a private one) while it runs."""
    from di_code.tools.policy.launcher import open_user_command  # the sandbox's modules: late

    with tempfile.TemporaryFile(dir=folder) as out:
        process = open_user_command(
            ["bash", "-c", command],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        passed, why = _wait(process, stop, timeout or CHECK_TIMEOUT)
        return Verdict(passed, redact(_tail(out) + why))


def _wait(
    process: subprocess.Popen[bytes], stop: threading.Event, limit: float
) -> tuple[bool | None, str]:
    """The check's verdict, and why it has none of its own (ended by the stop or the time)."""
    started = time.monotonic()
    while True:
        try:
            return process.wait(POLL_SECONDS) == 0, ""
        except subprocess.TimeoutExpired:
            pass
        if stop.is_set():
            kill_tree(process, STOP_GRACE)
            return None, ""
        if time.monotonic() - started > limit:
            kill_tree(process, STOP_GRACE)
            return False, f"[the check did not end within {limit:g} s]"


def _tail(out: BinaryIO) -> str:
    """The last OUTPUT_CHARS characters written (bytes that are not UTF-8 replaced)."""
    size = out.seek(0, 2)
    out.seek(max(0, size - 4 * OUTPUT_CHARS))
    return out.read().decode("utf-8", "replace")[-OUTPUT_CHARS:]
