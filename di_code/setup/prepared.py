"""`Prepared`: the agent and everything it runs with, as `prepare` (di_code.setup.prepare) makes it
for `run`, `chat` and `acp`, and as the chat's REPL and the ACP server read it.

It sits below the front ends, which read it, and outside the ui, which `run` does not load. A
test makes one from an agent alone: the defaults are a chat with no session, no permission gate
(every tool runs without asking) and no model list."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from di_code.config.settings import di_code_home
from di_code.tools.process.program_env import KEY_VARIABLES

if TYPE_CHECKING:
    from di_code.agent.agent import Agent
    from di_code.ai.stream import Provider
    from di_code.ai.types import Model
    from di_code.config.model_choices import ModelChoice
    from di_code.config.trusting import TrustOffer
    from di_code.session import Session, SessionStore
    from di_code.tools.builtin.support.job_table import JobTable
    from di_code.tools.extensions.mcp import McpServers
    from di_code.tools.lsp.manager import LanguageServers
    from di_code.tools.policy.permissions import PermissionGate
    from di_code.tools.policy.session_hooks import SessionHookRunner

SwitchModel = Callable[[str], "tuple[Provider, Model]"]

Notify = Callable[[str], None]
"""Tells the user one line (a warning, what was held back): on stderr for `run` and `chat`
(di_code.cli.output.notify_stderr, control characters shown), to the editor for `acp`."""


class Prepared(msgspec.Struct):
    """What a command runs prompts with. Mutable: trust given in a chat starts new MCP servers
    (`mcp`), and the chat adds what only it uses (`store`, `trust_offer`, `apply_trust`)."""

    agent: Agent
    session: Session | None = None
    """Where the conversation is recorded; None with --no-session."""
    store: SessionStore | None = None
    """Where /resume finds the workspace's other sessions; None with --no-session."""
    gate: PermissionGate | None = None
    workspace: Path = msgspec.field(default_factory=Path.cwd)
    home: Path = msgspec.field(default_factory=di_code_home)
    switch_model: SwitchModel | None = None
    """Resolves `provider/id` for /model; raises ConfigError with a one-line message."""
    models: Callable[[], list[ModelChoice]] = list
    """The configured and known models, for /model's list and its Tab completion."""
    mcp: McpServers | None = None
    """The session's MCP servers (/mcp lists them), stopped when the command ends."""
    lsp: LanguageServers | None = None
    """The language servers (/lsp lists them), started on first use, stopped at the end."""
    attach_session: Callable[[Agent, Session], object] = lambda agent, s: s.record(agent)
    """Records an agent's messages (and checkpoints) in a session (again after /clear)."""
    jobs: JobTable | None = None
    """The background jobs bash started (/jobs lists them), stopped when the command ends."""
    bash_state: Callable[[], str] | None = None
    """How bash runs commands now (sandboxed or not: it follows the permission mode)."""
    hidden_env: frozenset[str] = KEY_VARIABLES
    """The variables every program run for the user starts without (bash's `hidden_env`):
    a `!command` too."""
    trust_offer: TrustOffer | None = None
    """What the untrusted project's files would set once trusted (each value, a line, and the
    files as read for it): the chat lists it and asks once, before the first prompt."""
    session_hooks: SessionHookRunner | None = None
    """The user's Notification, SessionStart and SessionEnd hooks (None: there are none)."""
    notify: str = "auto"
    """How chat tells the user it needs them (the `notify` setting; di_code.ui.attention)."""
    apply_trust: Callable[[], Awaitable[list[str]]] | None = None
    """Applies what the user has just trusted to this chat (servers start, tools appear);
    the lines to show."""
