"""A task's check: the shell command of its `check` field, run in its checkout once the task
has ended, whose exit status is the result's `passed` (0: true). It is what makes a batch an
evaluation: the model's own answer says what it believes, the check what holds.

The check runs after the patch is taken (what it writes, a test cache, is no part of the
task's work), as the user's command: `bash -c` in the checkout with the task's environment,
through the launcher (unsandboxed, as CI would run it), under the task's keeper
(di_code.cli.batch_child), which hands whatever the check left behind, a double-forked daemon
included, to its own end. Its output (stdout and stderr) comes through a pipe of which only the
end is kept in memory (a check that prints the provider's key, or prints for ever, leaves it
nowhere), and the result keeps that end, redacted. It has the task's timeout (or CHECK_TIMEOUT)
of its own; a check that does not end within it fails, and one the batch's stop interrupts has
no verdict.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from di_code.ai.redaction import redact
from di_code.system.children import kill_tree

STOP_GRACE = 3.0
"""How long a task's or a check's process has, once asked to stop, before it and all it
started are killed (a task's keeper, di_code.cli.batch_child, passes the stop on to `run`)."""
CHECK_TIMEOUT = 600.0
"""Seconds a check may run when its task names no timeout."""
OUTPUT_CHARS = 2_000
"""The end of the check's output kept in the result (the rest is kept nowhere)."""
POLL_SECONDS = 0.1
KEPT_BYTES = 4 * OUTPUT_CHARS
"""Enough bytes for OUTPUT_CHARS characters of UTF-8."""
DRAIN_SECONDS = 5.0
"""How long the output of an ended check may take to reach its end: a bound, not a wait (the
pipe ends as soon as the keeper does)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    passed: bool | None
    """None: the batch was stopped before the check ended."""
    output: str


def run_check(
    command: str,
    cwd: Path,
    env: Mapping[str, str],
    keeper: Sequence[str],
    stop: threading.Event,
    timeout: float | None,
) -> Verdict:
    """Run `command` in `cwd`, under the `keeper` program, until it ends, the stop is set or
    `timeout` passes."""
    from di_code.tools.process.launcher import open_user_command  # the sandbox's modules: late

    process = open_user_command(
        [*keeper, "bash", "-c", command],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert process.stdout is not None
    tail = _Tail(process.stdout)
    passed, why = _wait(process, stop, timeout or CHECK_TIMEOUT)
    return Verdict(passed, redact(tail.text() + why))


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


class _Tail:
    """The last KEPT_BYTES a pipe carried, read on a thread of its own until it ends (when the
    keeper, the last process holding it, has ended)."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self._pipe = pipe
        self._kept = bytearray()
        self._reader = threading.Thread(target=self._read, name="check output", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        with self._pipe, contextlib.suppress(OSError):  # closed here: no other thread reads it
            while chunk := os.read(self._pipe.fileno(), 65_536):
                self._kept += chunk
                del self._kept[:-KEPT_BYTES]

    def text(self) -> str:
        """The last OUTPUT_CHARS characters written (bytes that are not UTF-8 replaced)."""
        self._reader.join(DRAIN_SECONDS)
        return bytes(self._kept).decode("utf-8", "replace")[-OUTPUT_CHARS:]
