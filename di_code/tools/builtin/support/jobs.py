"""Background jobs: a command bash started with `background: true`, alive across turns, read,
typed into and stopped by the job tools (`job_tools.py`).

A job starts like any bash command (the policy's `launch`: the sandbox of the moment, the
hidden variables, the launcher and di_code.system.children, so it dies with di-code), in a process
group of its own, with its stdin a pipe (or, with `pty`, all three a pseudo-terminal) and its
output read into a `JobLog` (bounded memory, the whole in a file). It ends one of three ways:
- on its own: the shell exits; whatever it left in its group is killed (a job is its tree),
  and the table gets one notice for the model and the chat;
- by job_kill or /jobs (`killed`), or when its session ends (`stopped`): SIGTERM to the group,
  SIGKILL after KILL_AFTER, and SIGKILL to every process below it that left the group and
  to every one carrying its MARK (a double fork's daemon is below no one of the job);
- with di-code: di_code.system.children ends every group it started (and the sandbox's pid
  namespace catches what escaped).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signals
import time
import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from di_code.system.abort import AbortSignal
from di_code.system.children import carrying, descendants, group_members, signal_group
from di_code.tools.builtin.support.job_log import JobLog
from di_code.tools.builtin.support.job_match import Matcher
from di_code.tools.builtin.support.job_table import MAX_RUNNING, NOTICE_START, JobTable
from di_code.tools.builtin.support.process import EXIT_GRACE, KILL_AFTER, POLL, read_pipe, shell
from di_code.tools.builtin.support.truncation import keep_tail
from di_code.tools.common.errors import ToolError
from di_code.tools.process.launcher import start_program

if TYPE_CHECKING:
    from di_code.tools.builtin.support.bash_policy import BashPolicy

Ending = Literal["exited", "killed", "stopped"]
Launch = AbstractContextManager[tuple[list[str], dict[str, str]]]
"""The policy's `launch`: a command line and its environment, held while the command runs."""
NOTICE_LINES = 5
COMMAND_SHOWN = 80
MARK = "DI_CODE_JOB"
"""A variable each job's processes inherit, naming the job: job_kill finds by it those that
left its group and its tree (a double-forked daemon)."""
INPUT_STALL = 5.0
"""Seconds job_input waits for a job that reads none of its input before it gives up."""


class Job:
    def __init__(self, job_id: int, command: str, pty: bool, log: JobLog, table: JobTable) -> None:
        self.id, self.command, self.pty, self.log, self._table = job_id, command, pty, log, table
        self.pid = 0
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
        self._input: int | None = None
        self._output: int | None = None
        self._held = ExitStack()
        self._done = asyncio.Event()
        self._waiters: list[asyncio.Future[None]] = []
        self._watcher: asyncio.Future[None] | None = None

    @property
    def running(self) -> bool:
        return self.ending is None

    def shown_command(self) -> str:
        line = " ".join(self.command.split())
        return line if len(line) <= COMMAND_SHOWN else f"{line[: COMMAND_SHOWN - 1]}…"

    def state(self) -> str:
        """`running (pid 12, 5 s)`, `exited with code 1`, `killed`."""
        if self.ending is None:
            return f"running (pid {self.pid}, {time.monotonic() - self.started:.0f} s)"
        if self.ending != "exited":
            return "killed" if self.ending == "killed" else "stopped when its session ended"
        if self.code is not None and self.code < 0:
            return f"killed by signal {_signal_name(-self.code)}"
        return f"exited with code {self.code}"

    def title(self) -> str:
        return f"job {self.id} (`{self.shown_command()}`): {self.state()}"

    async def start(self, launch: Launch, cwd: str) -> None:
        """Start the command line `launch` gives (the policy's), held until the job ends."""
        loop = asyncio.get_running_loop()
        try:
            argv, env = self._held.enter_context(launch)
        except BaseException:
            self.log.close()
            raise
        env[MARK] = self.mark.partition("=")[2]
        if self.pty:
            env["TERM"] = "dumb"
        if self.pty:
            parent, child = os.openpty()
            self._input, self._output = parent, parent
            stdin: Any = child
            out = child
        else:
            self._output, out = os.pipe()
            stdin, self._input = os.pipe()
        try:
            process = await start_program(
                argv, stdin=stdin, stdout=out, stderr=out, cwd=cwd, env=env
            )
        except BaseException:
            self._close_fds()
            self._held.close()
            self.log.close()
            raise
        finally:
            for fd in {stdin, out}:
                os.close(fd)
        self.pid = process.pid
        os.set_blocking(self._input, False)
        eof = read_pipe(loop, self._output, self._feed)
        eof.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._watcher = asyncio.ensure_future(self._watch(process, eof))  # held: not collected

    def _feed(self, chunk: bytes) -> None:
        self.log.feed(chunk)
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def changed(self, timeout: float) -> None:
        """Until new output comes, the job ends, or `timeout` seconds pass."""
        if not self.running or timeout <= 0:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await asyncio.wait({waiter}, timeout=timeout)

    async def _watch(self, process: asyncio.subprocess.Process, eof: asyncio.Future[None]) -> None:
        code = await process.wait()
        await asyncio.wait({eof}, timeout=EXIT_GRACE)
        signal_group(self.pid, signals.SIGKILL)  # what it left in its group ends with it
        self._close_fds()
        self._end(code)

    def _close_fds(self) -> None:
        loop = asyncio.get_running_loop()
        for fd in {self._input, self._output} - {None}:
            assert fd is not None
            loop.remove_reader(fd)
            with contextlib.suppress(OSError):
                os.close(fd)
        self._input = self._output = None

    def _end(self, code: int) -> None:
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

    async def kill(self, reason: Ending = "killed") -> None:
        """End the job's whole tree; returns once it has ended."""
        if not self.running:
            return
        self._stopping = reason
        tree = descendants(self.pid)
        signal_group(self.pid, signals.SIGTERM)
        deadline = time.monotonic() + KILL_AFTER
        while group_members(self.pid) and time.monotonic() < deadline:
            await asyncio.sleep(POLL)
        signal_group(self.pid, signals.SIGKILL)
        for pid in {*tree, *descendants(self.pid), *carrying(self.mark)}:
            with contextlib.suppress(OSError):
                os.kill(pid, signals.SIGKILL)
        await self._done.wait()

    async def type(self, text: str, eof: bool, signal: AbortSignal) -> str | None:
        """Write `text` to the job's stdin; None, or why not all of it was taken."""
        data = text.encode("utf-8", "replace")  # a lone surrogate as `?`
        if eof and self.pty:
            data += b"\x04"
        stalled = time.monotonic() + INPUT_STALL
        while data:
            fd = self._input
            if fd is None:
                return "the job has ended; its input was not read"
            try:
                written = os.write(fd, data)
            except BlockingIOError:
                written = 0
            except OSError as exc:
                return f"its input cannot be written: {exc.strerror}"
            data = data[written:]
            if written:
                stalled = time.monotonic() + INPUT_STALL
            elif signal.aborted or time.monotonic() > stalled:
                return f"the job did not read its input ({len(data)} bytes were not sent)"
            else:
                await asyncio.sleep(POLL)
        if eof and not self.pty and self._input is not None:
            os.close(self._input)
            self._input = None
        return None

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
            await self.changed(min(left, 0.5))

    def take_output(self) -> str:
        """The job's title and the output not read yet (bounded like bash's), marked read."""
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
        if self.log.cut_at is not None:
            parts.append(
                f"[The output file keeps only the first {self.log.cut_at} bytes; "
                "the rest was not saved.]"
            )
        return "\n\n".join(parts)


async def start_job(
    table: JobTable,
    policy: BashPolicy,
    command: str,
    roots: Sequence[Path],
    cwd: Path,
    pty: bool,
) -> Job:
    """A new job running `command` in `cwd`, confined to `roots` when sandboxed."""
    if len(table.running()) >= MAX_RUNNING:
        raise ToolError(
            f"{MAX_RUNNING} background jobs are running already: stop one with job_kill first."
        )
    job = Job(table.new_id(), command, pty, JobLog(policy.spill), table)
    await job.start(policy.launch([shell(), "-c", command], roots), str(cwd))
    table.add(job)
    return job


def _signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return str(number)
