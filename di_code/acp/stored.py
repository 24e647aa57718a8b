"""The stored sessions as an editor sees them: one id each, and the folder each belongs to.

An editor knows a session by the id `session/new` (or `session/list`) gave it, and sends every
later message with that id. So a session is reopened only by its whole id, exactly as given:
a prefix (which `chat --session` accepts) would be registered under the whole id, and the
editor's replays, prompts and cancels would then name a session that is not open.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import RequestError

from di_code.config.settings import di_code_home
from di_code.session.format import SessionError
from di_code.session.store import SessionStore, check_folder, session_id_of


async def check_stored(session_id: str, workspace: Path) -> None:
    """Raise the editor's error unless `session_id` is the whole id of a stored session that
    belongs to `workspace` (read off the event loop: the store is a folder of files)."""

    def check() -> None:
        path = SessionStore(di_code_home()).locate(session_id, workspace)
        if session_id_of(path) != session_id:
            raise SessionError(
                f'"{session_id}" is not a whole id: send the session\'s whole id, as '
                "session/new or session/list gave it"
            )
        check_folder(path, workspace)

    try:
        await asyncio.to_thread(check)
    except SessionError as exc:
        raise RequestError.invalid_params({"sessionId": str(exc)}) from None
