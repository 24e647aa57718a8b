"""Commands run in the user's editor's terminal, for bash under `di-code acp` when the editor
offers terminals: the user watches the output live where they work. A bash call runs in one
until it exits (`run`); a background job lives in one across turns (`open`, then `output`,
`wait_for_exit`, `kill` and `release`, as `job_terminal.py` drives them).

Only where the command runs changes: the permission gate has decided before, and the command
line and environment are the ones di-code would run itself (inside bubblewrap when the
sandbox is on, without the hidden variables), so the editor runs the sandbox too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from di_code.system.abort import AbortSignal
from di_code.tools.builtin.support.process import KILL_AFTER, Exit

EXIT_AFTER_KILL = KILL_AFTER + 3.0
"""How long an editor may take to kill a terminal and say it exited (or to answer a job's last
look and release) before di-code stops waiting for it."""


@dataclass(frozen=True, slots=True)
class TerminalRun:
    terminal_id: str
    output: str
    """What the editor kept of the output (its end, when it had to drop some)."""
    dropped: bool
    """The editor dropped the beginning of the output to stay within its limit."""
    exit: Exit


@dataclass(frozen=True, slots=True)
class TerminalOutput:
    text: str
    """What the editor kept of the output so far (its end, once it had to drop some)."""
    dropped: bool
    """The editor dropped the beginning of the output to stay within its limit."""
    code: int | None
    """The exit code once the command exited (minus a signal's number), else None."""


class EditorTerminals(Protocol):
    def shows(self, tool_call_id: str) -> bool:
        """Whether the editor shows this tool call (a subagent's calls it does not see run
        in di-code's own bash)."""
        ...

    async def run(
        self,
        tool_call_id: str,
        argv: Sequence[str],
        cwd: str,
        env: Mapping[str, str],
        timeout: float,
        signal: AbortSignal,
    ) -> TerminalRun:
        """Run `argv` in a new terminal shown in the tool call, until it exits, `timeout`
        seconds pass or `signal` fires (then the terminal is killed); raises ToolError when
        the editor refuses."""
        ...

    async def open(
        self, tool_call_id: str, argv: Sequence[str], cwd: str, env: Mapping[str, str]
    ) -> str:
        """Start `argv` in a new terminal shown in the tool call, and leave it running: its
        id. Raises ToolError when the editor refuses."""
        ...

    async def output(self, terminal_id: str) -> TerminalOutput:
        """The terminal's output so far, and its exit code once it exited."""
        ...

    async def wait_for_exit(self, terminal_id: str) -> int | None:
        """Until the terminal's command exits: its exit code (minus a signal's number)."""
        ...

    async def kill(self, terminal_id: str) -> None:
        """Kill the terminal's command; the terminal stays, to be read and released."""
        ...

    async def release(self, terminal_id: str) -> None:
        """Let the terminal go (its command is killed if it still runs; the editor may go on
        showing it in the tool call)."""
        ...
