"""Background jobs: a command bash started with `background: true`, alive across turns, read,
typed into and stopped by the job tools (`job_tools.py`). What every job is, is `job_base.py`;
this is a job in di-code's own processes (`ProcessJob`), and `start_job`, which starts one
there or, over ACP where the editor offers terminals, in the editor's (`job_terminal.py`).

A job in di-code's own processes starts like any bash command (the policy's `launch`: the
sandbox of the moment, the hidden variables, the launcher and di_code.system.children, so it
dies with di-code), in a process group of its own, with its stdin a pipe (or, with `pty`, all
three a pseudo-terminal) and its output read into a `JobLog` (bounded memory, the whole in a
file). It ends one of three ways:
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
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from di_code.system.abort import AbortSignal
from di_code.system.children import carrying, descendants, group_members, signal_group
from di_code.tools.builtin.support.job_base import MARK, Ending, Job, Launch
from di_code.tools.builtin.support.job_log import JobLog
from di_code.tools.builtin.support.job_table import MAX_RUNNING, JobTable
from di_code.tools.builtin.support.process import EXIT_GRACE, KILL_AFTER, POLL, read_pipe, shell
from di_code.tools.common.errors import ToolError
from di_code.tools.process.launcher import start_program

if TYPE_CHECKING:
    from di_code.tools.builtin.support.bash_policy import BashPolicy

INPUT_STALL = 5.0
"""Seconds job_input waits for a job that reads none of its input before it gives up."""


class ProcessJob(Job):
    def __init__(self, job_id: int, command: str, pty: bool, log: JobLog, table: JobTable) -> None:
        super().__init__(job_id, command, pty, log, table)
        self.pid = 0
        self._input: int | None = None
        self._output: int | None = None
        self._watcher: asyncio.Future[None] | None = None

    def where(self) -> str:
        return f"pid {self.pid}"

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


async def start_job(
    table: JobTable,
    policy: BashPolicy,
    command: str,
    roots: Sequence[Path],
    cwd: Path,
    pty: bool,
    shown_in: str | None = None,
) -> Job:
    """A new job running `command` in `cwd`, confined to `roots` when sandboxed: in the
    editor's terminal, shown in tool call `shown_in`, when one is given and the editor offers
    terminals (a job with `pty` is typed into, which an editor's terminal cannot be: it runs
    in di-code), else in di-code's own processes."""
    if len(table.running()) >= MAX_RUNNING:
        raise ToolError(
            f"{MAX_RUNNING} background jobs are running already: stop one with job_kill first."
        )
    launch = policy.launch([shell(), "-c", command], roots)
    log = JobLog(policy.spill)
    job: Job
    if shown_in is not None and policy.terminals is not None and not pty:
        from di_code.tools.builtin.support.job_terminal import TerminalJob

        job = TerminalJob(table.new_id(), command, log, table, policy.terminals)
        await job.start(launch, str(cwd), shown_in)
    else:
        job = ProcessJob(table.new_id(), command, pty, log, table)
        await job.start(launch, str(cwd))
    table.add(job)
    return job
