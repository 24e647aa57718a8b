"""What every background job is, wherever it runs: an id, a command, its output (`JobLog`),
how far the model has read it, how it ended, and the waits and reads the job tools make.

Where its processes run is a subclass's: di-code's own (`jobs.ProcessJob`) or the editor's
terminal over ACP (`job_terminal.TerminalJob`). A subclass starts the command, feeds its
output through `_feed`, calls `_end` once when it has ended, and says how it is killed and
typed into.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager, ExitStack
from typing import Literal

from di_code.system.abort import AbortSignal
from di_code.tools.builtin.support.job_log import JobLog
from di_code.tools.builtin.support.job_match import Matcher
from di_code.tools.builtin.support.job_table import NOTICE_START, JobTable
from di_code.tools.builtin.support.process import signal_name
from di_code.tools.builtin.support.truncation import keep_tail

Ending = Literal["exited", "killed", "stopped"]
Launch = AbstractContextManager[tuple[list[str], dict[str, str]]]
"""The policy's `launch`: a command line and its environment, held while the command runs."""
NOTICE_LINES = 5
COMMAND_SHOWN = 80
MARK = "DI_CODE_JOB"
"""A variable each job's processes inherit, naming the job: job_kill finds by it those that
left its group and its tree (a double-forked daemon)."""
LOOK_AGAIN = 0.5
"""How often a wait looks whether the user stopped the turn."""


class Job(ABC):
    def __init__(self, job_id: int, command: str, pty: bool, log: JobLog, table: JobTable) -> None:
        self.id, self.command, self.pty, self.log, self._table = job_id, command, pty, log, table
        self.started = time.monotonic()
        self.mark = f"{MARK}={job_id}-{uuid.uuid4().hex}"
        self.cursor = 0
        """Output bytes the model has read (job_output, job_input, bash's first output)."""
        self.last_read = 0
        """Where the last read began: a pattern is waited for from there on, so that a line
        the model saw already (a server's `listening` in bash's first output) counts."""
        self.code: int | None = None
        self.ending: Ending | None = None
        self._stopping: Ending | None = None
        self._held = ExitStack()
        """The launch (sandbox and all), held until the job ends."""
        self._done = asyncio.Event()
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def running(self) -> bool:
        return self.ending is None

    @abstractmethod
    def where(self) -> str:
        """Where it runs, for its state: `pid 12`, `in the editor's terminal term-1`."""

    @abstractmethod
    async def kill(self, reason: Ending = "killed") -> None:
        """End the job's whole tree; returns once it has ended."""

    @abstractmethod
    async def type(self, text: str, eof: bool, signal: AbortSignal) -> str | None:
        """Write `text` to the job's stdin; None, or why not all of it was taken."""

    async def refresh(self) -> None:
        """Take in the output that came since the last look, where it is not pushed to us
        (an editor's terminal); di-code's own jobs' output comes by itself."""
        return None

    def shown_command(self) -> str:
        line = " ".join(self.command.split())
        return line if len(line) <= COMMAND_SHOWN else f"{line[: COMMAND_SHOWN - 1]}…"

    def state(self) -> str:
        """`running (pid 12, 5 s)`, `exited with code 1`, `killed`."""
        if self.ending is None:
            return f"running ({self.where()}, {time.monotonic() - self.started:.0f} s)"
        if self.ending != "exited":
            return "killed" if self.ending == "killed" else "stopped when its session ended"
        if self.code is None:
            return "exited (its exit code was not told)"
        if self.code < 0:
            return f"killed by signal {signal_name(-self.code)}"
        return f"exited with code {self.code}"

    def title(self) -> str:
        return f"job {self.id} (`{self.shown_command()}`): {self.state()}"

    def _feed(self, chunk: bytes) -> None:
        self.log.feed(chunk)
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def changed(self, timeout: float, signal: AbortSignal) -> None:
        """Until new output comes, the job ends, the user stops, or `timeout` seconds pass."""
        if not self.running or timeout <= 0 or signal.aborted:
            return
        waiter = asyncio.get_running_loop().create_future()

        def stopped(reason: object) -> None:
            if not waiter.done():
                waiter.set_result(None)

        self._waiters.append(waiter)
        signal.add_listener(stopped)
        try:
            await asyncio.wait({waiter}, timeout=timeout)
        finally:  # a wait that timed out is not kept: a silent job read for hours grows nothing
            signal.remove_listener(stopped)
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)

    def _end(self, code: int | None) -> None:
        self.code, self.ending = code, self._stopping or "exited"
        self.log.close()
        self._held.close()
        self._done.set()
        self._wake()
        if self.ending == "exited":
            self._table.tell(self.notice(), self.id)

    def notice(self) -> str:
        """What the model and the user are told once when the job ends on its own."""
        lines = self.log.last_lines(NOTICE_LINES)
        tail = "; last lines:\n" + "\n".join(lines) if lines else "; no output"
        return f"{NOTICE_START}{self.title()[len('job ') :]}{tail}]"

    async def wait_for(
        self, seconds: float, pattern: str | None, signal: AbortSignal, since: int | None = None
    ) -> str:
        """Wait up to `seconds`: for `pattern` in the output from `since` (else from where the
        last read began) on, line by line, or without one for the job's end. What happened,
        for the model."""
        start = self.last_read if since is None else since
        matcher = Matcher(pattern, start) if pattern is not None else None
        deadline = time.monotonic() + seconds
        while True:
            if matcher is not None and matcher.seen(self.log):
                return f"[Pattern seen: {pattern!r}]"
            if not self.running:
                return "" if matcher is None else f"[The job ended before {pattern!r} appeared]"
            left = deadline - time.monotonic()
            if signal.aborted:
                return "[Waiting stopped: the user interrupted]"
            if left <= 0:
                if matcher is None:
                    return f"[Still running after {seconds:g} s]" if seconds else ""
                return f"[Pattern {pattern!r} not seen within {seconds:g} s]"
            await self.changed(min(left, LOOK_AGAIN), signal)

    async def take_output(self) -> str:
        """The job's title and the output not read yet (bounded like bash's), marked read."""
        await self.refresh()
        new = self.log.read_since(self.cursor)
        self.last_read, self.cursor = self.cursor, new.end
        if not self.running:
            self._table.seen_end(self.id)
        lines = new.data.decode("utf-8", "replace").split("\n")
        if lines[-1] == "":
            lines.pop()
        kept, cut = keep_tail(lines)
        parts = [self.title(), "\n".join(kept) if kept else "(no new output)"]
        if cut is not None or new.skipped:
            size = new.skipped + len(new.data)
            parts.append(
                f"[The new output was {size} bytes; showing its last {len(kept)} lines. "
                f"The whole output: {self.log.path}]"
            )
        parts += self.losses()
        return "\n\n".join(parts)

    def losses(self) -> list[str]:
        """What the read must say of output that is not all there."""
        if self.log.cut_at is None:
            return []
        return [
            f"[The output file keeps only the first {self.log.cut_at} bytes; "
            "the rest was not saved.]"
        ]
