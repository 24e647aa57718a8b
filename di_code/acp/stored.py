"""The stored sessions as an editor sees them: one id each, the folder each belongs to, and
the list it shows (`session/list`), deleting one (`session/delete`) and forking one
(`session/fork`).

An editor knows a session by the id `session/new` (or `session/list`) gave it, and sends every
later message with that id. So a session is reopened only by its whole id, exactly as given:
a prefix (which `chat --session` accepts) would be registered under the whole id, and the
editor's replays, prompts and cancels would then name a session that is not open.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from acp import RequestError
from acp.schema import ListSessionsResponse, SessionInfo

from di_code.config.settings import di_code_home
from di_code.session.format import SessionError
from di_code.session.holder import SessionBusy
from di_code.session.store import (
    SessionStore,
    SessionSummary,
    check_folder,
    session_id_of,
    summaries,
)


async def check_stored(session_id: str, workspace: Path) -> None:
    """Raise the editor's error unless `session_id` is the whole id of a stored session that
    belongs to `workspace` (read off the event loop: the store is a folder of files)."""
    await _off_loop(lambda: _whole(SessionStore(di_code_home()), session_id, workspace))


async def delete_stored(session_id: str, workspace: Path) -> None:
    """Delete a stored session of `workspace` and its undo data, by its whole id (the check
    `check_stored` makes); the caller makes sure it is not open."""

    from di_code.session.deletion import delete_session  # the checkpoints: not for a list

    def delete() -> None:
        store = SessionStore(di_code_home())
        delete_session(store, _whole(store, session_id, workspace), workspace)

    try:
        await _off_loop(delete)
    except OSError as exc:
        raise RequestError.internal_error({"message": f"not deleted: {exc}"}) from None


async def fork_stored(session_id: str, workspace: Path) -> str:
    """The id of a new session of `workspace` that starts with the whole conversation of the
    stored session `session_id` (session/fork); the original, open or not, is only read."""
    from di_code.session.fork import fork

    forked: list[str] = []

    def copy() -> None:
        store = SessionStore(di_code_home())
        source = store.open(_whole(store, session_id, workspace), workspace, write=False)
        made = fork(store, source, workspace, source.leaf_id)
        made.release()  # saved; the editor's next request opens it
        forked.append(made.id)

    await _off_loop(copy)
    return forked[0]


def _whole(store: SessionStore, session_id: str, workspace: Path) -> Path:
    """The file of the stored session `session_id` names whole, if it belongs to `workspace`."""
    path = store.locate(session_id, workspace)
    if session_id_of(path) != session_id:
        raise SessionError(
            f'"{session_id}" is not a whole id: send the session\'s whole id, as '
            "session/new or session/list gave it"
        )
    check_folder(path, workspace)
    return path


async def _off_loop(work: Callable[[], object]) -> None:
    try:
        await asyncio.to_thread(work)
    except SessionBusy as exc:  # held by another process: not a bad id, the same error as load's
        raise RequestError.internal_error({"message": str(exc)}) from None
    except SessionError as exc:
        raise RequestError.invalid_params({"sessionId": str(exc)}) from None


PAGE = 50
"""Sessions per `session/list` answer."""


async def list_page(cwd: str | None, cursor: str | None) -> ListSessionsResponse:
    """One page of the stored sessions, newest first: of the folder `cwd`, or of every folder.

    The cursor names the last session shown (its time of writing and file), so a page goes on
    where the last one stopped even when sessions are written in between."""
    if cwd is not None and not Path(cwd).is_absolute():
        raise RequestError.invalid_params({"cwd": f"not an absolute path: {cwd}"})
    after = _after(cursor)
    folder = Path(cwd) if cwd is not None else None

    def page() -> ListSessionsResponse:
        files = SessionStore(di_code_home()).newest(folder)
        if after is not None:
            files = [(stamp, path) for stamp, path in files if (stamp, path.name) < after]
        shown = summaries((path for _, path in files), PAGE)
        infos = [_info(summary) for summary in shown]
        if not shown or len(shown) < PAGE:
            return ListSessionsResponse(sessions=infos)
        last = shown[-1].path
        [stamp] = [stamp for stamp, path in files if path == last]
        return ListSessionsResponse(sessions=infos, next_cursor=f"{stamp}:{last.name}")

    return await asyncio.to_thread(page)


def _after(cursor: str | None) -> tuple[int, str] | None:
    if cursor is None:
        return None
    stamp, _, name = cursor.partition(":")
    if not stamp.isdigit() or not name:
        raise RequestError.invalid_params({"cursor": "not a cursor session/list gave"})
    return int(stamp), name


def _info(summary: SessionSummary) -> SessionInfo:
    when = datetime.fromtimestamp(summary.modified, UTC).isoformat(timespec="seconds")
    return SessionInfo(
        session_id=summary.id,
        cwd=summary.cwd,
        title=summary.first_prompt[:100] or None,
        updated_at=when.replace("+00:00", "Z"),
    )
