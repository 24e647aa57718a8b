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
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from acp import RequestError, helpers
from acp.schema import (
    CloseSessionResponse,
    DeleteSessionResponse,
    ForkSessionResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
)

from di_code.acp.commands import (
    BUILT_IN_COMMANDS,
    Done,
    command_of,
    offered,
    run_command,
    skill_prompt,
)
from di_code.acp.config_options import (
    SETTING_COMMANDS,
    config_options,
    mode_updates,
    options_update,
    set_option,
    setting_command,
    switch_mode,
)
from di_code.acp.files import ClientFiles, undo_writer
from di_code.acp.live import CloseSession, LiveSession, OpenSession, SessionRequest, modes
from di_code.acp.mcp_servers import mcp_configs
from di_code.acp.permission import editor_approver
from di_code.acp.previews import preview_of
from di_code.acp.prompt import prompt_text, user_content
from di_code.acp.stored import check_stored, delete_stored, fork_stored
from di_code.acp.terminal import ClientTerminals
from di_code.acp.updates import EventTranslator, note_text
from di_code.agent.events import (
    AgentEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    TurnEndEvent,
)
from di_code.agent.prompt_hooks import PromptBlocked
from di_code.ai.types import AssistantMessage, ImageContent, TextContent, UserContent
from di_code.config.custom_commands import load_commands
from di_code.config.skills import load_skills
from di_code.session import prompt_with_compaction
from di_code.session.prompt_notes import content_with_notes
from di_code.system.abort import AbortController
from di_code.tools.builtin.support.attachments import AttachmentError, refuse_images

logger = logging.getLogger(__name__)

CLOSE_WAIT = 10.0
"""Seconds a closed session's cancelled prompt is waited for before its servers stop."""


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
        self._changing: set[str] = set()
        """Sessions being opened or closed: a load of one is refused until that is done (so
        a session is never open twice, nor opened again while it still runs)."""
        self._editor_fs = editor_fs
        """Whether the client reads and writes text files for the agent (its buffers)."""
        self._editor_terminal = editor_terminal
        """Whether the client runs commands in its terminals for the agent."""

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        live = await self._start(_folder(cwd), None, mcp_servers or [])
        return NewSessionResponse(
            session_id=live.id, modes=modes(live.gate.mode), config_options=config_options(live)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        live = await self._reopen(_folder(cwd), session_id, mcp_servers or [])
        agent = live.opened.agent
        for update in live.translator.replay(agent.transcript, agent.tools):
            await self._send(live.id, update)
        return LoadSessionResponse(modes=modes(live.gate.mode), config_options=config_options(live))

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> ResumeSessionResponse:
        """As `load_session`, without replaying the conversation (the editor still shows it)."""
        live = await self._reopen(_folder(cwd), session_id, mcp_servers or [])
        return ResumeSessionResponse(
            modes=modes(live.gate.mode), config_options=config_options(live)
        )

    async def fork_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None
    ) -> ForkSessionResponse:
        """A new session, opened, that starts with a stored one's conversation; the original
        stays as it was (still open, if it is)."""
        workspace = _folder(cwd)
        forked = await fork_stored(session_id, workspace)
        live = await self._reopen(workspace, forked, mcp_servers or [])
        return ForkSessionResponse(
            session_id=live.id, modes=modes(live.gate.mode), config_options=config_options(live)
        )

    async def close_session(self, session_id: str, **_: Any) -> CloseSessionResponse:
        """End one session: its running prompt cancelled, its servers and tools stopped."""
        await self._end(self._live(session_id), "the editor closed the session")
        return CloseSessionResponse()

    async def delete_session(self, session_id: str, workspace: Path) -> DeleteSessionResponse:
        """Delete a stored session of `workspace` with its undo data. Not while it is open
        here (close it first): its prompt and tools would go on with a deleted file. Its id
        is taken while the files go, so a load of it at the same time is refused."""
        if session_id in self._sessions:
            raise RequestError.invalid_request(
                {"sessionId": "that session is open: close it first (session/close)"}
            )
        if session_id in self._changing:
            raise RequestError.invalid_request(
                {"sessionId": "that session is being opened, closed or deleted"}
            )
        with self._held(session_id):
            await delete_stored(session_id, workspace)
        return DeleteSessionResponse()

    async def set_session_mode(
        self, mode_id: str, session_id: str, **_: Any
    ) -> SetSessionModeResponse:
        live = self._live(session_id)
        switch_mode(live, mode_id)
        await self._send(live.id, options_update(live))
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> SetSessionConfigOptionResponse:
        live = self._live(session_id)
        for update in await set_option(live, config_id, value):
            await self._send(live.id, update)
        return SetSessionConfigOptionResponse(config_options=config_options(live))

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
        if command is not None and command[0] in SETTING_COMMANDS:
            said, updates = await setting_command(live, *command)
            for update in updates:
                await self._send(live.id, update)
            await self._say(live, said)
            return PromptResponse(stop_reason="end_turn")
        if command is not None:
            done = await self._command(live, *command)
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
        live.idle.clear()
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
            live.idle.set()
        live.for_model.clear()
        return await self._ended(live, final)

    async def _command(self, live: LiveSession, name: str, arg: str) -> Done:
        """`/compact` or `/undo`, as a prompt runs: no other prompt meanwhile, and a close
        waits for it."""
        live.controller = AbortController()
        live.idle.clear()
        writer = None
        if live.files is not None:
            loop = asyncio.get_running_loop()
            writer = undo_writer(live.files, lambda: live.opened.agent.tools, loop)
        try:
            return await run_command(name, arg, live.opened.agent, live.opened.session, writer)
        finally:
            live.controller = None
            live.idle.set()

    async def close(self) -> None:
        """Stop every session's servers and tools (the client closed the connection)."""
        for live in list(self._sessions.values()):
            await self._end(live, "the editor closed the connection")

    async def _end(self, live: LiveSession, why: str) -> None:
        """The one place a session stops being open: its prompt cancelled and waited for (so
        nothing of it runs on; bounded, so a stuck tool cannot hold the exit), then what it
        holds let go. Its id stays taken until then."""
        with self._held(live.id):
            self._sessions.pop(live.id, None)
            if live.controller is not None:
                live.controller.abort(why)
            if live.files is not None:
                live.files.abandon()  # a read the editor never answers holds nothing up
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(live.idle.wait(), CLOSE_WAIT)
            if live.announce is not None:
                live.announce.cancel()
            live.unsubscribe()
            await self._close(live.opened)

    @contextlib.contextmanager
    def _held(self, session_id: str) -> Iterator[None]:
        """`session_id` taken (`_changing`) while its session is opened, closed or deleted."""
        self._changing.add(session_id)
        try:
            yield
        finally:
            self._changing.discard(session_id)

    async def _reopen(self, workspace: Path, session_id: str, servers: list[Any]) -> LiveSession:
        """A stored session opened again: by its whole id, in its own folder, and once (the
        id is taken before the first wait, so a second load at the same time is refused)."""
        if session_id in self._sessions or session_id in self._changing:
            raise RequestError.invalid_request({"sessionId": "that session is already open"})
        with self._held(session_id):
            await check_stored(session_id, workspace)
            return await self._start(workspace, session_id, servers)

    async def _start(
        self, workspace: Path, session_id: str | None, servers: list[Any]
    ) -> LiveSession:
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
        live_id = stored.id if stored is not None else uuid.uuid4().hex
        if session_id not in (None, live_id):  # the store changed under us: never two ids
            await self._close(opened)
            raise RequestError.internal_error({"sessionId": f"{session_id!r} was not opened"})
        live = LiveSession(
            id=live_id,
            opened=opened,
            translator=EventTranslator(
                opened.workspace, preview_of(lambda: opened.agent.tools, files)
            ),
            commands=load_commands(opened.home, opened.workspace, BUILT_IN_COMMANDS),
            skills=load_skills(opened.home, opened.workspace).skills,
            to_say=to_say,
            files=files,
        )
        live.idle.set()
        if files is not None:
            files.session_id = live.id
        if terminals is not None:
            terminals.session_id = live.id
            terminals.shown_call = lambda: live.current_call
        live.gate.approver = live.gate.plan_reviewer = editor_approver(
            self._client, live.id, lambda: live.current_call, opened.workspace
        )
        live.mode_said = live.gate.mode
        live.unsubscribe = opened.agent.subscribe(self._forwarder(live))
        self._register(live)
        commands = helpers.update_available_commands(offered(live.commands, live.skills))
        live.announce = asyncio.create_task(self._send(live.id, commands))
        return live

    def _register(self, live: LiveSession) -> None:
        """The one place a session becomes open: under the one id the editor knows it by."""
        if live.id in self._sessions:
            raise RequestError.invalid_request({"sessionId": "that session is already open"})
        self._sessions[live.id] = live

    def _forwarder(self, live: LiveSession) -> Callable[[AgentEvent], Awaitable[None]]:
        async def forward(event: AgentEvent) -> None:
            if isinstance(event, ToolExecutionStartEvent):
                live.current_call = event.tool_call_id
            if isinstance(event, TurnEndEvent):
                live.usage.add(event.message.usage)
            updates = await live.translator.updates(event)
            if isinstance(event, ToolExecutionEndEvent):
                updates += mode_updates(live)
            for update in updates:
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
        await self._send(live.id, helpers.update_agent_message_text(note_text(text)))

    def _live(self, session_id: str) -> LiveSession:
        live = self._sessions.get(session_id)
        if live is None:
            raise RequestError.invalid_params({"sessionId": f"no open session {session_id!r}"})
        return live

    async def _send(self, session_id: str, update: Any) -> None:
        await self._client.session_update(session_id=session_id, update=update)


def _folder(cwd: str) -> Path:
    """The folder a session works in, as the editor names it: tools, checkpoints and undo
    all take this one value (a stored session of another folder is refused)."""
    workspace = Path(cwd)
    if not workspace.is_absolute() or not workspace.is_dir():
        raise RequestError.invalid_params({"cwd": f"not an absolute folder: {cwd}"})
    return workspace
