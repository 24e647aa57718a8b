"""An editor's session while it is open: what it was set up with, and what it holds.

`sessions.py` opens, registers and closes them; the modes the editor switches between are
di-code's permission modes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from acp.schema import SessionMode, SessionModeState

from di_code.acp.files import ClientFiles
from di_code.acp.updates import EventTranslator
from di_code.acp.usage import SessionUsage
from di_code.config.custom_commands import CommandSet
from di_code.config.skills import Skill
from di_code.setup.prepared import Prepared
from di_code.system.abort import AbortController
from di_code.tools.builtin.support.editor_files import EditorFiles
from di_code.tools.builtin.support.editor_terminal import EditorTerminals
from di_code.tools.extensions.mcp_config import McpServerConfig
from di_code.tools.policy.modes import PermissionMode
from di_code.tools.policy.permissions import PermissionGate

MODES: tuple[tuple[PermissionMode, str, str], ...] = (
    ("ask", "Ask", "Ask before bash, edits and other tools that change things"),
    ("accept-edits", "Accept edits", "Edit files without asking; ask before bash"),
    ("auto", "Auto", "Run every tool without asking (bash sandboxed where bubblewrap works)"),
    ("read-only", "Read only", "Only read, grep, find and ls"),
    ("plan", "Plan", "Explore read-only, then present a plan to approve before anything changes"),
)


@dataclass(frozen=True, slots=True)
class SessionRequest:
    """What an editor asks a session to be set up with."""

    workspace: Path
    session_id: str | None
    """None for a new session, else the stored one to go on with."""
    editor: EditorFiles | None
    """The editor's files, for the file tools, when it offers them."""
    terminals: EditorTerminals | None
    """The editor's terminals, for bash, when it offers them."""
    mcp_servers: tuple[McpServerConfig, ...]
    """The editor's MCP servers, started beside the configured ones."""
    notify: Callable[[str], None]
    """Where the set-up and the session's tools say what the user must know (an untrusted
    project's settings held back, a checkpoint that failed): to the editor."""


OpenSession = Callable[[SessionRequest], Awaitable[Prepared]]
CloseSession = Callable[[Prepared], Awaitable[None]]


@dataclass
class LiveSession:
    id: str
    opened: Prepared
    translator: EventTranslator
    commands: CommandSet
    skills: tuple[Skill, ...]
    controller: AbortController | None = None
    current_call: str = ""
    unsubscribe: Callable[[], None] = field(default=lambda: None)
    to_say: list[str] = field(default_factory=list)
    """What di-code has to tell the user, said at the next prompt's start or end."""
    for_model: list[str] = field(default_factory=list)
    """What the model has not seen yet (what /undo restored): it goes before the next prompt."""
    usage: SessionUsage = field(default_factory=SessionUsage)
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    """Set while no prompt runs (`session/close` waits for it after cancelling)."""
    files: ClientFiles | None = None
    """The editor's file system, when it offers one (`/undo` writes through it)."""
    mode_said: str = ""
    """The permission mode the editor was last told (a plan approved switches it here)."""
    announce: asyncio.Task[None] | None = None
    """The commands offered, sent once the answer giving the session's id has gone out: a
    client may not know an update's session before (JetBrains' then hangs)."""

    @property
    def gate(self) -> PermissionGate:
        gate = self.opened.gate
        assert gate is not None  # `prepare` always makes one
        return gate


def modes(current: PermissionMode) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current,
        available_modes=[SessionMode(id=m, name=n, description=d) for m, n, d in MODES],
    )
