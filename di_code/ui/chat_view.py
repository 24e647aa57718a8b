"""What the chat's parts see of it: `ChatSetup` (what the CLI hands the REPL) and `ChatView`
(what the REPL offers its keys, commands and watchers). The parts are typed against these,
not against the REPL itself, so the REPL can import them without an import circle."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import AnyFormattedText
    from rich.console import Console

    from di_code.agent.agent import Agent
    from di_code.ai.abort import AbortController
    from di_code.ai.stream import Provider
    from di_code.ai.types import Model
    from di_code.config.model_choices import ModelChoice
    from di_code.session import Session, SessionStore
    from di_code.tools.extensions.mcp import McpServers
    from di_code.tools.policy.permissions import PermissionGate, PermissionMode
    from di_code.ui.approval import ReplApprover
    from di_code.ui.pastes import Pastes
    from di_code.ui.reflow import Reflow
    from di_code.ui.render import Renderer

SwitchModel = Callable[[str], "tuple[Provider, Model]"]


@dataclass(slots=True)
class ChatSetup:
    """What the CLI hands the REPL. `store` is None with --no-session."""

    agent: Agent
    session: Session | None = None
    store: SessionStore | None = None
    gate: PermissionGate | None = None
    workspace: Path = field(default_factory=Path.cwd)
    switch_model: SwitchModel | None = None
    """Resolves `provider/id` for /model; raises ConfigError with a one-line message."""
    models: Callable[[], list[ModelChoice]] = list
    """The configured and known models, for /model's list and its Tab completion."""
    mcp: McpServers | None = None
    """The session's MCP servers (/mcp lists them)."""
    attach_session: Callable[[Agent, Session], object] = lambda agent, s: s.record(agent)
    """Records the agent's messages (and checkpoints) in a session."""
    bash_state: Callable[[], str] | None = None
    """How bash runs commands now (sandboxed or not: it follows the permission mode)."""
    held_back: str | None = None
    """What the untrusted project's settings would set once trusted (each value, a line): the
    chat lists it and asks once, before the first prompt, whether to trust it."""
    apply_trust: Callable[[], Awaitable[list[str]]] | None = None
    """Applies what the user has just trusted to this chat (servers start, tools appear);
    the lines to show."""


class ChatView(Protocol):
    """The running chat (ui.repl.Repl is the one there is)."""

    setup: ChatSetup
    console: Console
    renderer: Renderer
    approver: ReplApprover
    reflow: Reflow
    pastes: Pastes
    notes_for_model: list[str]
    """Said to the model before the next prompt (a `!command`'s output, an undo)."""

    @property
    def agent(self) -> Agent: ...
    @property
    def busy(self) -> bool: ...
    @property
    def exit_armed(self) -> bool: ...
    @exit_armed.setter
    def exit_armed(self, armed: bool) -> None: ...
    def invalidate(self) -> None: ...
    def abort(self) -> None: ...
    def start(self, work: Callable[[AbortController], Awaitable[None]]) -> None: ...
    def replace_agent(self, messages: list[Any], session: Session | None) -> None: ...
    def switch_mode(self, mode: PermissionMode) -> None: ...
    def expand(self, number: int | None = None, *, thinking: bool = False) -> None: ...
    def toggle_thinking(self) -> None: ...
    def clear_screen(self) -> None: ...
    def status_line(self) -> str: ...
    def prompt_message(self) -> AnyFormattedText: ...
    async def submit(self, text: str) -> bool: ...
