"""The bash tool: run a command in the workspace and report its output, exit code and fate.

The model sees the last 2000 lines / 50 KB of the interleaved output, then one line per fact:
where the full output is (when cut), and why the command failed (exit code, signal, timeout or
abort). Partial output is sent through `on_update` at most every UPDATE_INTERVAL seconds.

The command never sees the provider keys di-code holds: their variables are taken out of its
environment (sandboxed or not). With a sandbox, it runs inside bubblewrap (`sandbox.py`); which
sandbox, if any, the policy says at the moment the command starts (`bash_policy.py`).

Under `di-code acp`, when the editor offers terminals, the same command line (sandbox and all)
runs in the editor's terminal instead (`editor_terminal.py`); the model is told the same way.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from di_code.agent.tool import ToolOutput, ToolResult, ToolUpdate
from di_code.ai.types import TextContent
from di_code.system.abort import AbortSignal
from di_code.tools.builtin.cards import BASH, BASH_DEFAULT_TIMEOUT
from di_code.tools.builtin.support.bash_policy import BashPolicy
from di_code.tools.builtin.support.editor_terminal import EditorTerminals
from di_code.tools.builtin.support.output_buffer import OutputBuffer, Snapshot
from di_code.tools.builtin.support.process import KILL_AFTER, Exit, run_in_group, shell, signal_name
from di_code.tools.common.base import WorkspaceTool

UPDATE_INTERVAL = 0.1
FIRST_OUTPUT = 1.0
TERMINAL_STOPPED = "the editor's terminal was killed"
TERMINAL_DROPPED = "[The editor's terminal kept only the end of the output; the rest is lost.]"


@dataclass(frozen=True, slots=True)
class BashTool(WorkspaceTool):
    policy: BashPolicy = field(default_factory=BashPolicy)
    name: ClassVar[str] = BASH.name
    parameters: ClassVar[dict[str, Any]] = BASH.parameters

    @property
    def description(self) -> str:
        return self.policy.tool_description()

    async def run_call(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal,
        on_update: ToolUpdate | None,
    ) -> ToolOutput:
        """A call the editor shows runs in the editor's terminal, when it offers them, and so
        does a background job it starts (but one with a pty: `jobs.start_job`)."""
        terminals = self.policy.terminals
        if terminals is None or not terminals.shows(tool_call_id):
            return await self.run(params, signal, on_update)
        if params.get("background"):
            await self.policy.ready()
            return await self._in_background(params, signal, shown_in=tool_call_id)
        return await self._in_terminal(terminals, tool_call_id, params, signal)

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        await self.policy.ready()
        if params.get("background"):
            return await self._in_background(params, signal)
        timeout = float(params.get("timeout", BASH_DEFAULT_TIMEOUT))
        buffer = OutputBuffer(self.policy.spill)
        fresh = asyncio.Event()

        def sink(chunk: bytes) -> None:
            buffer.feed(chunk)
            fresh.set()

        ticker = asyncio.create_task(_stream_updates(buffer, fresh, on_update))
        argv = [shell(), "-c", params["command"]]
        try:
            with self.policy.launch(argv, self.workspace.roots) as (argv, env):
                exit = await run_in_group(
                    argv, str(self.workspace.root), timeout, signal, sink, env
                )
        finally:
            ticker.cancel()
            buffer.close()
        return _result(buffer.snapshot(), exit, timeout)

    async def _in_background(
        self, params: dict[str, Any], signal: AbortSignal, shown_in: str | None = None
    ) -> ToolOutput:
        """A job that outlives the call: started (in the editor's terminal shown in call
        `shown_in`, when given), its first output (up to FIRST_OUTPUT s)."""
        from di_code.tools.builtin.job_tools import settled
        from di_code.tools.builtin.support.job_terminal import TerminalJob
        from di_code.tools.builtin.support.jobs import start_job

        job = await start_job(
            self.policy.jobs, self.policy, params["command"], self.workspace.roots,
            self.workspace.root, bool(params.get("pty")), shown_in,
        )  # fmt: skip
        await settled(job, FIRST_OUTPUT, signal)
        typing = "type into it with job_input, "
        details = {"job_id": job.id, "command": job.command, "full_output_path": job.log.path}
        if isinstance(job, TerminalJob):
            typing = "it runs in the editor's terminal, which takes no input; "
            details["terminal_id"] = job.terminal_id
        text = (
            f"Started {await job.take_output()}\n\n[Read more with job_output(job_id={job.id}) "
            f"(wait and pattern wait for a line), {typing}stop it with job_kill.]"
        )
        return ToolResult([TextContent(text)], details)

    async def _in_terminal(
        self,
        terminals: EditorTerminals,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal,
    ) -> ToolOutput:
        """The command in the editor's terminal; its output is cut and spilled as ours is."""
        timeout = float(params.get("timeout", BASH_DEFAULT_TIMEOUT))
        argv = [shell(), "-c", params["command"]]
        await self.policy.ready()
        with self.policy.launch(argv, self.workspace.roots) as (argv, env):
            ran = await terminals.run(
                tool_call_id, argv, str(self.workspace.root), env, timeout, signal
            )
        buffer = OutputBuffer(self.policy.spill)
        try:
            buffer.feed(ran.output.encode("utf-8"))
        finally:
            buffer.close()
        dropped = TERMINAL_DROPPED if ran.dropped else None
        result = _result(buffer.snapshot(), ran.exit, timeout, TERMINAL_STOPPED, dropped)
        return dataclasses.replace(
            result, details={**result.details, "terminal_id": ran.terminal_id}
        )


async def _stream_updates(
    buffer: OutputBuffer, fresh: asyncio.Event, on_update: ToolUpdate | None
) -> None:
    """Send the output so far when there is new output, at most every UPDATE_INTERVAL."""
    if on_update is None:
        return
    while True:
        await fresh.wait()
        fresh.clear()
        await on_update(_partial(buffer.snapshot()))
        await asyncio.sleep(UPDATE_INTERVAL)


def _details(snapshot: Snapshot, code: int | None) -> dict[str, Any]:
    return {
        "exit_code": code,
        "full_output_path": snapshot.spill_path,
        "truncated": snapshot.truncation is not None,
    }


def _partial(snapshot: Snapshot) -> ToolResult:
    return ToolResult([TextContent(snapshot.text)], _details(snapshot, None))


def _result(
    snapshot: Snapshot,
    exit: Exit,
    timeout: float,
    stopped: str | None = None,
    dropped: str | None = None,
) -> ToolResult:
    """`stopped` says how a stopped command was stopped (else: its process group's fate);
    `dropped`, that the output's beginning was lost before it reached us."""
    parts = [snapshot.text or "(no output)"]
    if dropped is not None:
        parts.append(dropped)
    if snapshot.truncation is not None:
        last = snapshot.first_line + snapshot.truncation.output_lines - 1
        parts.append(
            f"[Showing lines {snapshot.first_line}-{last} of {snapshot.truncation.total_lines}. "
            f"Full output: {snapshot.spill_path}]"
        )
    if snapshot.spill_cut_at is not None:
        parts.append(
            f"[The output file keeps only the first {snapshot.spill_cut_at} bytes; "
            "the rest was not saved.]"
        )
    fate = _fate(exit, timeout, stopped)
    if fate:
        parts.append(fate)
    is_error = bool(fate)
    return ToolResult([TextContent("\n\n".join(parts))], _details(snapshot, exit.code), is_error)


def _fate(exit: Exit, timeout: float, stopped: str | None = None) -> str | None:
    """Why the command failed, or None when it exited 0."""
    how = f"SIGKILL after {KILL_AFTER:g} s" if exit.killed else "SIGTERM"
    stopped = stopped or f"process group stopped ({how})"
    match exit.stopped:
        case "timeout":
            return f"Command timed out after {timeout:g} seconds; {stopped}"
        case "aborted":
            return f"Command aborted; {stopped}"
        case None:
            pass
    if exit.code is None or exit.code == 0:
        return None
    if exit.code < 0:
        return f"Command killed by signal {signal_name(-exit.code)}"
    return f"Command exited with code {exit.code}"
