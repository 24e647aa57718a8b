"""The editor's terminals over ACP (`terminal/create`, `terminal/wait_for_exit`,
`terminal/output`, `terminal/kill`, `terminal/release`), as bash's EditorTerminals: a bash
call runs in one until it exits, a background job lives in one across turns.

The terminal is embedded in the bash call's content as soon as it exists, so the editor shows
the output live. The editor starts the command with its own environment plus what we send:
variables di-code's command must not see (the provider keys) are taken out by running it
through `env -u NAME`, and those set or changed for it (TMPDIR in the sandbox) are sent.

When the editor answers `terminal/wait_for_exit` with an error or a malformed answer (one that
does not implement it says the method is not found: it is not asked again), the exit is read
from `terminal/output`, whose answer carries `exitStatus` once the command exited: looked at
with a pace that starts at FIRST_EXIT_LOOK and doubles up to EXIT_LOOK_PACE, and at once after
a kill, so a stop never waits for the pace.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signals
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from acp import RequestError, helpers
from acp.schema import EnvVariable
from pydantic import ValidationError

from di_code.system.abort import AbortSignal
from di_code.tools.builtin.support.editor_terminal import (
    EXIT_AFTER_KILL,
    TerminalOutput,
    TerminalRun,
)
from di_code.tools.builtin.support.process import Exit, StopReason
from di_code.tools.common.errors import ToolError

OUTPUT_LIMIT = 1024 * 1024
"""Bytes of output the editor keeps (its last ones): the model is shown the last 50 KB, and
the whole of it goes to the spill file when longer (a job's, as it is read)."""
METHOD_NOT_FOUND = -32601
"""JSON-RPC's error code for a method the editor does not implement."""
FIRST_EXIT_LOOK = 0.05
EXIT_LOOK_PACE = 1.0
"""Seconds between two looks at `terminal/output` for an exit, first and at most: a short
command is told soon, a long job costs one request a second."""


@dataclass
class ClientTerminals:
    client: Any
    session_id: str = ""
    """Set once the session has its id (the tools are made before it)."""
    shown_call: Callable[[], str] = lambda: ""
    """The id of the tool call the editor was last shown starting."""
    exit_waits: bool = True
    """Whether to ask `terminal/wait_for_exit` (not once the editor said it has no such method)."""
    _killed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when a terminal was killed (then replaced): its exit is looked for at once."""

    def shows(self, tool_call_id: str) -> bool:
        return tool_call_id == self.shown_call()

    async def run(
        self,
        tool_call_id: str,
        argv: Sequence[str],
        cwd: str,
        env: Mapping[str, str],
        timeout: float,
        signal: AbortSignal,
    ) -> TerminalRun:
        terminal_id = await self.open(tool_call_id, argv, cwd, env)
        try:
            stopped, code = await self._wait(terminal_id, timeout, signal)
            output = await self._last_look(terminal_id, stopped)
        finally:
            with contextlib.suppress(Exception):  # released even when the turn is torn down
                await asyncio.wait_for(self.release(terminal_id), EXIT_AFTER_KILL)
        exit = Exit(code if code is not None else output.code, stopped)
        return TerminalRun(terminal_id, output.text, output.dropped, exit)

    async def open(
        self,
        tool_call_id: str,
        argv: Sequence[str],
        cwd: str,
        env: Mapping[str, str],
    ) -> str:
        """A terminal running `argv`, embedded in the tool call so the editor shows it live."""
        command, args, variables = _command_line(argv, env)
        try:
            created = await self.client.create_terminal(
                session_id=self.session_id,
                command=command,
                args=args,
                env=variables,
                cwd=cwd,
                output_byte_limit=OUTPUT_LIMIT,
            )
        except RequestError as exc:
            raise ToolError(f"the editor could not start the command: {exc}") from None
        terminal_id: str = created.terminal_id
        embed = helpers.update_tool_call(
            tool_call_id, content=[helpers.tool_terminal_ref(terminal_id)]
        )
        try:
            await self.client.session_update(session_id=self.session_id, update=embed)
        except BaseException:
            with contextlib.suppress(Exception):
                await self.release(terminal_id)
            raise
        return terminal_id

    async def output(self, terminal_id: str) -> TerminalOutput:
        got = await self._ask(self.client.terminal_output, terminal_id)
        return TerminalOutput(got.output, bool(got.truncated), _code(got.exit_status))

    async def wait_for_exit(self, terminal_id: str) -> int | None:
        if self.exit_waits:
            try:
                exited = await self.client.wait_for_terminal_exit(
                    session_id=self.session_id, terminal_id=terminal_id
                )
            except RequestError as exc:  # an error says nothing of the exit
                if exc.code == METHOD_NOT_FOUND:
                    self.exit_waits = False
            except ValidationError:  # nor does an answer that is not ACP's
                pass
            else:
                return _code(exited)
        return await self._exit_from_output(terminal_id)

    async def _exit_from_output(self, terminal_id: str) -> int | None:
        """Until `terminal/output` says the command exited: its exit code. An answer that is
        an error or not ACP's says nothing (the command runs on; it is asked again); the
        connection's end raises."""
        pace, killed = FIRST_EXIT_LOOK, self._killed
        while True:
            try:
                await asyncio.wait_for(killed.wait(), pace)
                pace = FIRST_EXIT_LOOK
            except TimeoutError:
                pace = min(pace * 2, EXIT_LOOK_PACE)
            killed = self._killed  # (taken before the look: a kill during it is not missed)
            with contextlib.suppress(RequestError, ValidationError):
                got = await self.client.terminal_output(
                    session_id=self.session_id, terminal_id=terminal_id
                )
                if got.exit_status is not None:
                    return _code(got.exit_status)

    async def kill(self, terminal_id: str) -> None:
        await self._ask(self.client.kill_terminal, terminal_id)
        self._killed.set()
        self._killed = asyncio.Event()

    async def release(self, terminal_id: str) -> None:
        await self._ask(self.client.release_terminal, terminal_id)

    async def _ask(self, method: Callable[..., Awaitable[Any]], terminal_id: str) -> Any:
        """One terminal request; the editor's refusal as a ToolError the model reads."""
        try:
            return await method(session_id=self.session_id, terminal_id=terminal_id)
        except RequestError as exc:
            raise ToolError(f"the editor's terminal failed: {exc}") from None

    async def _wait(
        self, terminal_id: str, timeout: float, signal: AbortSignal
    ) -> tuple[StopReason | None, int | None]:
        """Until the command exits, or is killed at the timeout or the abort: why it was
        stopped (None: it exited) and its exit code (None if a killed one never said)."""
        exited = asyncio.ensure_future(self.wait_for_exit(terminal_id))
        aborted = asyncio.ensure_future(signal.wait())
        try:
            done, _ = await asyncio.wait(
                {exited, aborted}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if exited in done:
                return None, exited.result()
            stopped: StopReason = "aborted" if aborted in done else "timeout"
            try:
                code = await asyncio.wait_for(
                    self._kill_and_wait(terminal_id, exited), EXIT_AFTER_KILL
                )
            except TimeoutError:  # the editor holds up a stop for so long, no longer
                code = None
            return stopped, code
        finally:
            aborted.cancel()
            if not exited.done():
                exited.cancel()

    async def _kill_and_wait(
        self, terminal_id: str, exited: asyncio.Future[int | None]
    ) -> int | None:
        await self.kill(terminal_id)
        return await exited

    async def _last_look(self, terminal_id: str, stopped: StopReason | None) -> TerminalOutput:
        """The output the editor kept; of a stopped command, what it says within
        EXIT_AFTER_KILL (nothing, if it does not answer: the stop waits no longer)."""
        if stopped is None:
            return await self.output(terminal_id)
        try:
            return await asyncio.wait_for(self.output(terminal_id), EXIT_AFTER_KILL)
        except TimeoutError:
            return TerminalOutput("", False, None)


def _command_line(
    argv: Sequence[str], env: Mapping[str, str]
) -> tuple[str, list[str], list[EnvVariable]]:
    """`argv` as the editor should start it, given that its process gets the editor's
    environment (taken to be di-code's own, which the editor started) plus `variables`."""
    removed = sorted(name for name in os.environ if name not in env)
    unset = [part for name in removed for part in ("-u", name)]
    full = ["env", *unset, "--", *argv] if unset else list(argv)
    variables = [
        EnvVariable(name=name, value=value)
        for name, value in env.items()
        if os.environ.get(name) != value
    ]
    return full[0], full[1:], variables


def _code(status: Any) -> int | None:
    """The exit code, or minus the signal's number (Python's convention), or None."""
    if status is None:
        return None
    if status.exit_code is not None:
        code: int = status.exit_code
        return code
    name = str(status.signal or "")
    for candidate in (name, f"SIG{name}"):
        if candidate in signals.Signals.__members__:
            return -signals.Signals[candidate].value
    return -int(name) if name.isdigit() else None
