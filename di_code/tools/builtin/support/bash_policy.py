"""How the bash tool runs commands: confined by a sandbox or not, which variables are hidden
from commands, where long outputs spill. Made at start-up, kept apart from the tool so the
policy (and the tool's description, which names the sandbox) is made without loading it.

Whether a command is sandboxed is decided when it starts, from the permission mode of that
moment (`mode`, the gate's): Shift+Tab or /permissions into auto mode confines the next command,
back to ask frees it. The mode is kept in one place, the gate, and only read here."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct, field, structs

from di_code.tools.builtin.cards import BASH, BASH_BACKGROUND
from di_code.tools.builtin.support.job_table import JobTable
from di_code.tools.builtin.support.spill import SpillFolder
from di_code.tools.process.launcher import confined
from di_code.tools.process.program_env import (
    KEY_VARIABLES,
    program_env,
    refusing_bare_repositories,
)
from di_code.tools.process.sandbox import Sandbox, SandboxChoice, bare_bubblewrap
from di_code.tools.process.sandbox_mounts import PRIVATE_TMP
from di_code.tools.process.session_network import SessionNetwork

if TYPE_CHECKING:  # the process machinery loads with the bash tool, not at start-up
    from di_code.tools.builtin.support.editor_terminal import EditorTerminals


def _ask() -> str:
    return "ask"


class BashPolicy(Struct, frozen=True):
    """How commands run: confined or not, with which variables hidden, spilling where, and
    where (di-code's own processes, or the editor's terminals)."""

    sandboxing: SandboxChoice = field(default_factory=lambda: SandboxChoice("off"))
    hidden_env: frozenset[str] = KEY_VARIABLES
    """Variable names removed from the command's environment (the provider keys); hooks
    start without the same ones."""
    spill: SpillFolder = field(default_factory=SpillFolder)
    mode: Callable[[], str] = _ask
    """The permission mode now (the gate's), read for every command."""
    terminals: EditorTerminals | None = None
    """The editor's terminals, where commands run under `di-code acp` when it offers them."""
    jobs: JobTable = field(default_factory=JobTable)
    """The session's background jobs (`background: true`), which the job tools read."""
    network: SessionNetwork = field(default_factory=SessionNetwork)
    """The network namespace the session's sandboxed commands share (without network)."""

    def sandbox(self) -> Sandbox | None:
        """The sandbox a command started now runs in (None: unsandboxed), in the session's
        network namespace when it has no network and that namespace has been made."""
        sandbox = self.sandboxing.sandbox(self.mode())
        if sandbox is None or sandbox.network or not self.network.tried:
            return sandbox
        entered = self.network.prefix(bare_bubblewrap())
        return sandbox if entered is None else structs.replace(sandbox, entered=tuple(entered))

    async def ready(self) -> None:
        """Make the session's network namespace (a child process or two) off the event loop,
        the first time a command will run sandboxed without network."""
        sandbox = self.sandboxing.sandbox(self.mode())
        if sandbox is not None and not sandbox.network and not self.network.tried:
            await asyncio.to_thread(self.network.prefix, bare_bubblewrap())

    @contextlib.contextmanager
    def launch(
        self, argv: list[str], roots: Sequence[Path]
    ) -> Iterator[tuple[list[str], dict[str, str]]]:
        """The command line and environment `argv` starts with now, held while it runs: in
        the sandbox of this moment (the spill folder readable in it), without the hidden
        variables and with git refusing bare repositories it would find on its own."""
        clean = refusing_bare_repositories(program_env(self.hidden_env))
        sandbox = self.sandbox()
        if sandbox is not None:
            clean["TMPDIR"] = PRIVATE_TMP
        with confined(argv, roots, sandbox, [self.spill.folder]) as wrapped:
            yield wrapped, clean

    def state(self) -> str:
        """How a command started now runs, for the user (/permissions)."""
        sandbox = self.sandbox()
        if sandbox is None:
            return "unsandboxed"
        network = "with network" if sandbox.network else "no network"
        return f"sandboxed ({sandbox.mode}, {network})"

    def tool_description(self) -> str:
        """The bash tool's description: the model is told what the sandbox allows (as of
        now: a prompt started after a mode switch is told the new state)."""
        sandbox = self.sandbox()
        if sandbox is None:
            return f"{BASH.description} {BASH_BACKGROUND}"
        if sandbox.network:
            return f"{BASH.description} {sandbox.describe()}"
        return f"{BASH.description} {sandbox.describe()} {self._loopback()}"

    def _loopback(self) -> str:
        """Whether a job's server is reachable from later commands (the session's network
        namespace, once made: until the first command it is expected to work)."""
        if self.network.failed:
            return (
                "Each command and job has a loopback of its own here: a job's server is "
                "reachable only from inside that job."
            )
        return (
            "Commands and background jobs share one private loopback (127.0.0.1): a server a "
            "job started is reachable from later commands."
        )
