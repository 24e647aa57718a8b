"""`/tree`: the session's branches (what `/rewind N conversation` left behind) as a tree to
choose from; the one chosen is where the next prompt goes on, and the move is written in the
session file, so `chat --continue` goes on there too. Nothing is deleted, no file touched."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import TYPE_CHECKING

from di_code.session.branches import Branch, branch_tree
from di_code.system.left_behind import LeftBehind, unless_aborted
from di_code.system.own_thread import on_own_thread
from di_code.ui.command_lines import say

if TYPE_CHECKING:
    from di_code.session import Session
    from di_code.system.abort import AbortController
    from di_code.ui.chat_view import ChatView


async def tree_command(repl: ChatView, arg: str) -> bool:
    session = repl.setup.session
    if session is None:
        raise ValueError("/tree needs a saved session (--no-session saves none).")
    if arg:
        raise ValueError("Usage: /tree")
    if session.leaf_id is None and not session.entries:
        return say(repl, "Nothing to show yet: the conversation has not started.")
    repl.start(_choose(repl, session))
    return True


def _choose(repl: ChatView, session: Session) -> Callable[[AbortController], Awaitable[None]]:
    async def work(controller: AbortController) -> None:
        signal, entries, leaf = controller.signal, session.entries, session.leaf_id
        building = on_own_thread(lambda: branch_tree(entries, leaf))
        chosen: Branch | None = None
        with suppress(LeftBehind):  # off the loop: 100,000 branches take seconds; Esc ends it
            chosen = await repl.tree.choose(await unless_aborted(building, signal), signal)
        if chosen is None:
            say(repl, "Left on the same branch.")
        elif chosen.current:
            say(repl, "Already on that branch.")
        else:
            session.switch_to(chosen.last_id)
            messages = session.context()
            repl.replace_agent(messages, session)
            named = f"“{chosen.title}”" if chosen.title else "a branch with no prompt yet"
            say(repl, f"Now on {named} ({len(messages)} messages): the next prompt goes on there.")

    return work
