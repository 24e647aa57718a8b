"""`/fork [N]`: go on in a new session that starts with this conversation (up to before prompt
N, as `/rewind N conversation` counts prompts); the original session is left as it was, to
`/resume` later. The files are not touched: a fork is of the conversation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from di_code.session.checkpoint_list import prompt_checkpoints
from di_code.session.fork import fork
from di_code.setup.session_events import session_started
from di_code.ui.command_lines import say

if TYPE_CHECKING:
    from di_code.ui.chat_view import ChatView


async def fork_command(repl: ChatView, arg: str) -> bool:
    setup = repl.setup
    original = setup.session
    if original is None or setup.store is None:
        raise ValueError("Forking needs a saved session (--no-session saves none).")
    words = arg.split()
    if words[1:] or (words and not words[0].isdigit()):
        raise ValueError("Usage: /fork [N] (N: the prompt to fork before; /rewind lists them)")
    leaf = original.leaf_id
    if words:
        number = int(words[0])
        target = next((c for c in prompt_checkpoints(original) if c.number == number), None)
        if target is None:
            raise ValueError(f"No prompt {number} in this session (/rewind lists them).")
        leaf = target.leaf_id
    forked = fork(setup.store, original, setup.workspace, leaf, "chat")
    messages = forked.context()
    repl.replace_agent(messages, forked)
    await session_started(setup, "resume")
    where = f"before prompt {words[0]}" if words else "here"
    return say(
        repl,
        f"Forked {where}: new session {forked.id} ({len(messages)} messages); "
        f"the original is {original.id} (/resume {original.id[:8]}).",
    )
