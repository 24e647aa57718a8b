"""The ACP agent the SDK serves: the session methods handed to `sessions.Sessions`.

`initialize` never reaches it: `hello.py` answers it before the SDK is imported. di-code's
agent machinery (the agent, tools, sessions, settings) is loaded when the first session is
asked for.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.schema import (
    AuthenticateResponse,
    CloseSessionResponse,
    DeleteSessionResponse,
    ForkSessionResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from di_code.acp.hello import KEY_METHODS
from di_code.system.first_use import import_off_loop

if TYPE_CHECKING:
    from di_code.acp.hello import EditorOffers
    from di_code.acp.live import CloseSession, OpenSession
    from di_code.acp.sessions import Sessions


class DiCodeAcpAgent:
    """Implements the SDK's Agent interface (session/*, authenticate)."""

    def __init__(
        self, open_session: OpenSession, close_session: CloseSession, offers: EditorOffers
    ) -> None:
        self._open = open_session
        self._close = close_session
        self._offers = offers
        self._client: Any = None
        self._live: Sessions | None = None

    def on_connect(self, conn: Any) -> None:
        self._client = conn

    async def authenticate(self, method_id: str, **_: Any) -> AuthenticateResponse:
        """Nothing to log in to: the key is in the environment the editor started di-code
        with (or in the config files, which the session reads), so this says whether it is."""
        variable = KEY_METHODS.get(method_id)
        if variable is None:
            raise RequestError.invalid_params({"methodId": f"unknown method {method_id!r}"})
        if not os.environ.get(variable):
            raise RequestError.auth_required({"message": f"{variable} is not set"})
        return AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        sessions = await self._sessions()
        return await sessions.new_session(cwd, mcp_servers)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        sessions = await self._sessions()
        return await sessions.load_session(cwd, session_id, mcp_servers)

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> ResumeSessionResponse:
        sessions = await self._sessions()
        return await sessions.resume_session(cwd, session_id, mcp_servers)

    async def fork_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> ForkSessionResponse:
        sessions = await self._sessions()
        return await sessions.fork_session(cwd, session_id, mcp_servers)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        from di_code.acp.stored import list_page  # the store alone: no session is opened

        return await list_page(cwd, cursor)

    async def close_session(self, session_id: str, **_: Any) -> CloseSessionResponse:
        sessions = await self._sessions()
        return await sessions.close_session(session_id)

    async def delete_session(self, session_id: str, **_: Any) -> DeleteSessionResponse:
        """A stored session of the folder the editor started `di-code acp` in (its project:
        the request names no folder), with its undo data; `own_methods` routes it here."""
        try:
            folder = Path.cwd()
        except OSError as exc:
            raise RequestError.internal_error({"message": f"no folder to work in: {exc}"}) from None
        sessions = await self._sessions()
        return await sessions.delete_session(session_id, folder)

    async def set_session_mode(
        self, mode_id: str, session_id: str, **_: Any
    ) -> SetSessionModeResponse:
        sessions = await self._sessions()
        return await sessions.set_session_mode(mode_id, session_id)

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> SetSessionConfigOptionResponse:
        sessions = await self._sessions()
        return await sessions.set_config_option(config_id, session_id, value)

    async def cancel(self, session_id: str, **_: Any) -> None:
        if self._live is not None:
            await self._live.cancel(session_id)

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        sessions = await self._sessions()
        return await sessions.prompt(prompt, session_id)

    async def close(self) -> None:
        """Stop every session's servers and tools (the client closed the connection)."""
        if self._live is not None:
            await self._live.close()

    async def _sessions(self) -> Sessions:
        """The sessions, made with the first request that needs one: their code (most of
        di-code) is imported then, off the loop (system/first_use.py)."""
        await import_off_loop("di_code.acp.sessions")  # at once when done: two requests get one
        if self._live is None:
            from di_code.acp.sessions import Sessions

            offers = self._offers
            self._live = Sessions(
                self._client, self._open, self._close, offers.files, offers.terminals
            )
        return self._live
