"""The ACP sessions: each a di-code session driven by prompts, cancel and modes, on the same
Agent the chat drives.

Each ACP session is a di-code session in the same store `chat --resume` reads (the ids are
the same), set up for the editor's `cwd` by the `open_session` the CLI hands in, with the
project's trust, rules, sandbox and checkpoints as in chat. Approvals go to the editor.
This module loads di-code's agent machinery: `server.py` imports it only once `initialize`
has been answered.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import RequestError, helpers
from acp.schema import (
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    StopReason,
)

from di_code.acp.commands import (
    BUILT_IN_COMMANDS,
    command_of,
    offered,
    run_command,
    skill_prompt,
)
from di_code.acp.files import ClientFiles
from di_code.acp.mcp_servers import mcp_configs
from di_code.acp.permission import editor_approver
from di_code.acp.previews import preview_of
from di_code.acp.prompt import prompt_text, user_content
from di_code.acp.terminal import ClientTerminals
from di_code.acp.updates import EventTranslator
from di_code.acp.usage import SessionUsage
from di_code.agent.events import AgentEvent, ToolExecutionStartEvent, TurnEndEvent
from di_code.agent.prompt_hooks import PromptBlocked
from di_code.ai.abort import AbortController
from di_code.ai.types import AssistantMessage, ImageContent, TextContent, UserContent
from di_code.config.custom_commands import CommandSet, load_commands
from di_code.config.skills import Skill, load_skills
from di_code.session import prompt_with_compaction
from di_code.session.prompt_notes import content_with_notes
from di_code.setup.prepared import Prepared
from di_code.tools.builtin.attachments import AttachmentError, refuse_images
from di_code.tools.builtin.editor_files import EditorFiles
from di_code.tools.builtin.editor_terminal import EditorTerminals
from di_code.tools.extensions.mcp_config import McpServerConfig
from di_code.tools.policy.permissions import PermissionGate, PermissionMode

logger = logging.getLogger(__name__)

MODES: tuple[tuple[PermissionMode, str, str], ...] = (
    ("ask", "Ask", "Ask before bash, edits and other tools that change things"),
    ("accept-edits", "Accept edits", "Edit files without asking; ask before bash"),
    ("auto", "Auto", "Run every tool without asking (bash sandboxed where bubblewrap works)"),
    ("read-only", "Read only", "Only read, grep, find and ls"),
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
    announce: asyncio.Task[None] | None = None
    """The commands offered, sent once the answer giving the session's id has gone out: a
    client may not know an update's session before (JetBrains' then hangs)."""

    @property
    def gate(self) -> PermissionGate:
        gate = self.opened.gate
        assert gate is not None  # `prepare` always makes one
        return gate


class Sessions:
    """The session methods of the SDK's Agent interface (session/*), for `server.py`."""

    def __init__(
        self,
        client: Any,
        open_session: OpenSession,
        close_session: CloseSession,
        editor_fs: bool,
        editor_terminal: bool,
    ) -> None:
        self._client = client
        self._open = open_session
        self._close = close_session
        self._sessions: dict[str, LiveSession] = {}
        self._editor_fs = editor_fs
        """Whether the client reads and writes text files for the agent (its buffers)."""
        self._editor_terminal = editor_terminal
        """Whether the client runs commands in its terminals for the agent."""

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        live = await self._start(cwd, None, mcp_servers or [])
        return NewSessionResponse(session_id=live.id, modes=_modes(live.gate.mode))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        live = await self._start(cwd, session_id, mcp_servers or [])
        for update in live.translator.replay(live.opened.agent.transcript):
            await self._send(live.id, update)
        return LoadSessionResponse(modes=_modes(live.gate.mode))

    async def set_session_mode(
        self, mode_id: str, session_id: str, **_: Any
    ) -> SetSessionModeResponse:
        live = self._live(session_id)
        if mode_id not in {mode for mode, _, _ in MODES}:
            raise RequestError.invalid_params({"modeId": f"unknown mode {mode_id!r}"})
        live.gate.switch(mode_id)
        return SetSessionModeResponse()

    async def cancel(self, session_id: str, **_: Any) -> None:
        live = self._sessions.get(session_id)
        if live is not None and live.controller is not None:
            live.controller.abort("cancelled by the editor")

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        live = self._live(session_id)
        if live.controller is not None:
            raise RequestError.invalid_request({"sessionId": "a prompt is already running"})
        await self._say_pending(live)
        text = prompt_text(prompt).strip()
        command = command_of(text)
        if command is not None:
            done = await run_command(*command, live.opened.agent, live.opened.session)
            live.for_model += [done.for_model] if done.for_model else []
            await self._say(live, done.said)
            return PromptResponse(stop_reason="end_turn")
        expanded = None
        if text.startswith("/"):
            expanded = live.commands.expand_prompt(text) or skill_prompt(live.skills, text)
        content: list[UserContent] = (
            [TextContent(expanded)] if expanded is not None else user_content(prompt)
        )
        if not content:
            raise RequestError.invalid_params({"prompt": "the prompt is empty"})
        try:  # as chat refuses them: nothing is sent
            images = sum(isinstance(block, ImageContent) for block in content)
            refuse_images(live.opened.agent.model, images)
        except AttachmentError as exc:
            await self._say(live, str(exc))
            return PromptResponse(stop_reason="refusal")
        controller = live.controller = AbortController()
        live.usage.start_prompt()
        try:
            final = await prompt_with_compaction(
                live.opened.agent,
                content_with_notes(live.for_model, content),
                live.opened.session,
                signal=controller.signal,
            )
        except PromptBlocked as exc:  # a UserPromptSubmit hook: nothing was sent
            await self._say(live, str(exc))
            return PromptResponse(stop_reason="refusal")
        finally:
            live.controller = None
        live.for_model.clear()
        return await self._ended(live, final)

    async def close(self) -> None:
        """Stop every session's servers and tools (the client closed the connection)."""
        for live in list(self._sessions.values()):
            if live.controller is not None:
                live.controller.abort("the editor closed the connection")
            live.unsubscribe()
            await self._close(live.opened)
        self._sessions.clear()

    async def _start(self, cwd: str, session_id: str | None, servers: list[Any]) -> LiveSession:
        workspace = Path(cwd)
        if not workspace.is_absolute() or not workspace.is_dir():
            raise RequestError.invalid_params({"cwd": f"not an absolute folder: {cwd}"})
        if session_id is not None and session_id in self._sessions:
            raise RequestError.invalid_request({"sessionId": "that session is already open"})
        files = ClientFiles(self._client) if self._editor_fs else None
        to_say: list[str] = []
        terminals = ClientTerminals(self._client) if self._editor_terminal else None
        try:
            servers_given = mcp_configs(servers)
            request = SessionRequest(
                workspace, session_id, files, terminals, servers_given, to_say.append
            )
            opened = await self._open(request)
        except Exception as exc:  # a configuration error: one line for the editor
            raise RequestError.internal_error({"message": str(exc)}) from None
        stored = opened.session
        live = LiveSession(
            id=stored.id if stored is not None else uuid.uuid4().hex,
            opened=opened,
            translator=EventTranslator(
                opened.workspace, preview_of(lambda: opened.agent.tools, files)
            ),
            commands=load_commands(opened.home, opened.workspace, BUILT_IN_COMMANDS),
            skills=load_skills(opened.home, opened.workspace).skills,
            to_say=to_say,
        )
        if files is not None:
            files.session_id = live.id
        if terminals is not None:
            terminals.session_id = live.id
            terminals.shown_call = lambda: live.current_call
        live.gate.approver = editor_approver(self._client, live.id, lambda: live.current_call)
        live.unsubscribe = opened.agent.subscribe(self._forwarder(live))
        self._sessions[live.id] = live
        commands = helpers.update_available_commands(offered(live.commands, live.skills))
        live.announce = asyncio.create_task(self._send(live.id, commands))
        return live

    def _forwarder(self, live: LiveSession) -> Callable[[AgentEvent], Awaitable[None]]:
        async def forward(event: AgentEvent) -> None:
            if isinstance(event, ToolExecutionStartEvent):
                live.current_call = event.tool_call_id
            if isinstance(event, TurnEndEvent):
                live.usage.add(event.message.usage)
            for update in await live.translator.updates(event):
                await self._send(live.id, update)

        return forward

    async def _ended(self, live: LiveSession, final: AssistantMessage) -> PromptResponse:
        stop: StopReason = "end_turn"
        if final.stop_reason == "aborted":
            stop = "cancelled"
        elif final.stop_reason == "length":
            stop = "max_tokens"
        elif final.stop_reason == "error":
            message = (final.error_message or "the request failed").strip()
            live.to_say.append(message)
            if message.startswith("Turn limit reached"):
                stop = "max_turn_requests"
        await self._say_pending(live)
        used = live.usage.of_prompt()
        if used is not None:
            window = live.opened.agent.model.context_window
            await self._send(live.id, live.usage.update(window))
        return PromptResponse(stop_reason=stop, usage=used)

    async def _say_pending(self, live: LiveSession) -> None:
        """What di-code has had to say since the last prompt (the set-up's notes first)."""
        while live.to_say:
            await self._say(live, live.to_say.pop(0))

    async def _say(self, live: LiveSession, text: str) -> None:
        said = text if text.startswith("di-code: ") else f"di-code: {text}"
        await self._send(live.id, helpers.update_agent_message_text(said + "\n"))

    def _live(self, session_id: str) -> LiveSession:
        live = self._sessions.get(session_id)
        if live is None:
            raise RequestError.invalid_params({"sessionId": f"no open session {session_id!r}"})
        return live

    async def _send(self, session_id: str, update: Any) -> None:
        await self._client.session_update(session_id=session_id, update=update)


def _modes(current: PermissionMode) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current,
        available_modes=[SessionMode(id=m, name=n, description=d) for m, n, d in MODES],
    )
