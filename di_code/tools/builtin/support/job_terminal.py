"""A background job in the editor's terminal (`di-code acp`, where the editor offers
terminals): the user watches it where they work, and the job tools read it through the
editor.

The terminal is embedded in the bash call that started it. The editor keeps the output, its
last megabyte as for a bash call; nothing pushes it to us, so it is asked for
(`terminal/output`) when the model reads the job, lists the jobs, and every LOOK_AGAIN
seconds while a read waits, and what is new since the last look goes into the job's `JobLog`
(memory and file, as a job of di-code's own). A request for its exit
(`terminal/wait_for_exit`, or `terminal/output` looked at until it says, where the editor
cannot answer that) waits the whole time: when the command exits, its last output is read, the
terminal released, and the end told as any job's. job_kill and the session's end
kill the terminal (`terminal/kill`), then release it; an editor that does not answer holds
each of the two (the kill and its exit; the last look and the release) up for at most
EXIT_AFTER_KILL, and one that cannot (its connection ended) has the job's processes killed
by their MARK.

An editor's terminal takes no input (ACP has no request for it): job_input refuses, and a
job started with `pty: true`, to be typed into, runs in di-code instead (`jobs.start_job`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signals

from di_code.system.abort import AbortSignal
from di_code.system.children import carrying
from di_code.tools.builtin.support.editor_terminal import EXIT_AFTER_KILL, EditorTerminals
from di_code.tools.builtin.support.job_base import LOOK_AGAIN, MARK, Ending, Job, Launch
from di_code.tools.builtin.support.job_log import JobLog
from di_code.tools.builtin.support.job_table import JobTable

ANCHOR = 1024
"""Characters of the output's end kept from one look to find where the next look's new part
begins, once the editor has dropped the beginning."""
NO_INPUT = (
    "it runs in the editor's terminal, which takes no input (start a job with pty: true to "
    "type into it; it then runs in di-code)"
)


class TerminalJob(Job):
    def __init__(
        self, job_id: int, command: str, log: JobLog, table: JobTable, terminals: EditorTerminals
    ) -> None:
        super().__init__(job_id, command, False, log, table)
        self._terminals = terminals
        self.terminal_id = ""
        self._seen = 0
        """Characters of the editor's output at the last look."""
        self._tail = ""
        """Its last ANCHOR characters."""
        self.dropped = False
        """Output the editor dropped before we looked: it is in neither the file nor memory."""
        self._looking = asyncio.Lock()
        self._finishing = False
        self._exited: asyncio.Future[int | None] | None = None
        self._finisher: asyncio.Future[None] | None = None

    def where(self) -> str:
        return f"in the editor's terminal {self.terminal_id}"

    async def start(self, launch: Launch, cwd: str, tool_call_id: str) -> None:
        """Start the command line `launch` gives in a terminal shown in `tool_call_id`."""
        try:
            argv, env = self._held.enter_context(launch)
            env[MARK] = self.mark.partition("=")[2]
            self.terminal_id = await self._terminals.open(tool_call_id, argv, cwd, env)
        except BaseException:
            _kill_marked(self.mark)  # the editor may have started it, and not said so yet
            self._held.close()
            self.log.close()
            raise
        self._exited = asyncio.ensure_future(self._terminals.wait_for_exit(self.terminal_id))
        self._exited.add_done_callback(self._on_exit)

    def _on_exit(self, exited: asyncio.Future[int | None]) -> None:
        """The editor said the command exited; or it cannot say (its connection ended): then
        the job is stopped as at the session's end, its MARK's processes killed here whatever
        the editor does."""
        if self._finishing:
            return
        if exited.cancelled() or exited.exception() is not None:
            ending = self.kill(reason="stopped")
        else:
            ending = self._finish(exited.result())
        self._finisher = asyncio.ensure_future(ending)  # held: not collected

    async def _finish(self, code: int | None) -> None:
        """The command has exited (or is taken to have): what it left running killed (its
        process group is the editor's, unknown here: whatever carries its MARK), its last
        output, the terminal released (within EXIT_AFTER_KILL), the end told. Once."""
        if self._finishing:
            await self._done.wait()
            return
        self._finishing = True
        _kill_marked(self.mark)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._last_look(), EXIT_AFTER_KILL)
        if self._exited is not None and not self._exited.done():
            self._exited.cancel()  # an editor that never said: nothing is left waiting
        self._end(code)

    async def _last_look(self) -> None:
        try:
            await self._look()
        finally:
            await self._terminals.release(self.terminal_id)

    async def refresh(self) -> None:
        if self.running and not self._finishing:
            with contextlib.suppress(Exception):  # an editor gone: the job ends by its exit
                await self._look()

    async def _look(self) -> None:
        async with self._looking:
            got = await asyncio.wait_for(self._terminals.output(self.terminal_id), EXIT_AFTER_KILL)
            new, dropped = fresh_output(self._seen, self._tail, got.text, got.dropped)
            self._seen, self._tail = len(got.text), got.text[-ANCHOR:]
            self.dropped |= dropped
            if new:
                self._feed(new.encode("utf-8", "replace"))

    async def changed(self, timeout: float, signal: AbortSignal) -> None:
        """Until the editor has new output, the job ends, the user stops, or `timeout`
        seconds pass: the editor is looked at every LOOK_AGAIN seconds."""
        loop = asyncio.get_running_loop()
        seen, deadline = self.log.total, loop.time() + timeout
        while self.running and self.log.total == seen and loop.time() < deadline:
            await super().changed(min(deadline - loop.time(), LOOK_AGAIN), signal)
            if signal.aborted:
                return
            await self.refresh()

    async def kill(self, reason: Ending = "killed") -> None:
        """Kill the terminal's command (the editor's), and whatever carries the job's MARK
        here (a daemon that left it); then its last output, and the terminal released."""
        if not self.running or self._finishing:
            await self._done.wait()
            return
        self._stopping = reason
        code = None
        with contextlib.suppress(Exception):
            code = await asyncio.wait_for(self._killed(), EXIT_AFTER_KILL)
        await self._finish(code)

    async def _killed(self) -> int | None:
        """The editor asked to kill the command, and whatever carries the job's MARK here
        killed; its exit code once the editor says it exited."""
        try:
            await self._terminals.kill(self.terminal_id)
        finally:
            _kill_marked(self.mark)
        assert self._exited is not None
        return await asyncio.shield(self._exited)

    async def type(self, text: str, eof: bool, signal: AbortSignal) -> str | None:
        return NO_INPUT

    def losses(self) -> list[str]:
        dropped = (
            ["[The editor's terminal dropped some of the output before it was read; it is lost.]"]
            if self.dropped
            else []
        )
        return [*dropped, *super().losses()]


def _kill_marked(mark: str) -> None:
    """SIGKILL to every process carrying the job's MARK (`DI_CODE_JOB=...`)."""
    for pid in carrying(mark):
        with contextlib.suppress(OSError):
            os.kill(pid, signals.SIGKILL)


def fresh_output(seen: int, tail: str, text: str, dropped: bool) -> tuple[str, bool]:
    """What of the editor's output `text` is new, given the last look saw `seen` characters
    ending in `tail`; and whether some output was lost between the looks (the editor dropped
    it before we saw it). While the editor dropped nothing, the new part follows the old;
    once it drops the beginning, the new part follows the old one's tail (its last
    occurrence: output that repeats itself is taken as old rather than read twice)."""
    if text[max(seen - len(tail), 0) : seen] == tail and not dropped:
        return text[seen:], False
    if not tail:
        return text, dropped
    at = text.rfind(tail)
    if at < 0:
        return text, True
    return text[at + len(tail) :], False
