"""SessionStart and SessionEnd, told to the user's hooks (di_code.tools.policy.session_hooks)
by the front ends: `run` and chat when they start and end, chat's /clear and /resume when
they change the session. Without such hooks nothing is done, and their code is not even
loaded (`run` imports this module)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from di_code.session import Session
    from di_code.setup.prepared import Prepared
    from di_code.tools.policy.session_hooks import HookSession


def hook_session(session: Session | None) -> HookSession:
    """The session as hooks name it: its id and its file ("" without one)."""
    from di_code.tools.policy.session_hooks import HookSession

    return HookSession() if session is None else HookSession(session.id, str(session.path))


async def session_started(prepared: Prepared, source: str) -> None:
    """`source`: "startup" (a new session), "resume" (one continued) or "clear"."""
    if prepared.session_hooks is not None:
        where = hook_session(prepared.session)
        await prepared.session_hooks.tell("SessionStart", where, source=source)


async def session_ended(prepared: Prepared, reason: str) -> None:
    """`reason`: "prompt_input_exit" (the user left chat), "clear" or "other"."""
    if prepared.session_hooks is not None:
        where = hook_session(prepared.session)
        await prepared.session_hooks.tell("SessionEnd", where, reason=reason)
