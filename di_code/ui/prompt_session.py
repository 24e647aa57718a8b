"""The chat's prompt-toolkit session: its keys, completion, bottom line and history, and how
long a lone Esc waits for the rest of a key sequence."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The first prompt's input and its search keys, which prompt-toolkit imports on first use:
# imported with this module, before the chat's loop starts (cli/chat.py says why).
import prompt_toolkit.input.vt100
import prompt_toolkit.key_binding.bindings.search  # noqa: F401
from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import merge_key_bindings

from di_code.system.private_files import open_private
from di_code.ui.completion import ChatCompleter
from di_code.ui.inline_output import drawn_on, inline_output
from di_code.ui.keys import key_bindings
from di_code.ui.raw_input import raw_input
from di_code.ui.screen_keys import screen_bindings

if TYPE_CHECKING:
    from di_code.ui.chat_view import ChatView

ESCAPE_WAIT_SECONDS = 0.05
"""How long a lone Esc byte waits for the rest of a key sequence (Alt+Enter, an arrow):
terminals send a sequence in one write, so 50 ms only guards a slow link (Neovim's default)."""
WORKING_KEY_WAIT_SECONDS = 0.0
"""While the agent works, Esc waits for no second key before it stops the agent: a key
sequence (Alt+Enter is `escape`, `enter`) arrives in one read, so it still matches whole.
When idle prompt-toolkit's 1 s stays, for Emacs sequences typed by hand (Ctrl-X Ctrl-X)."""
IDLE_KEY_WAIT_SECONDS = 1.0


def make_prompt_session(
    repl: ChatView, history: Path | None, io: dict[str, Any]
) -> PromptSession[str]:
    session: PromptSession[str] = PromptSession(
        repl.prompt_message,
        history=InMemoryHistory() if history is None else _private_history(history),
        completer=ChatCompleter(
            repl.setup.workspace, lambda: [c.spec for c in repl.setup.models()]
        ),
        complete_while_typing=True,
        key_bindings=merge_key_bindings(
            [
                key_bindings(repl),
                screen_bindings(repl),
                repl.attention.key_bindings(),
                repl.tree.key_bindings(),  # last: its Enter and arrows win while it is open
            ]
        ),
        erase_when_done=True,
        bottom_toolbar=repl.status_line,
        input=io.get("input") or raw_input(),
        output=io.get("output") or inline_output(repl.reflow),
    )
    session.app.ttimeoutlen = ESCAPE_WAIT_SECONDS
    drawn_on(session.app)
    repl.attention.start(session.app.output)  # focus reports: when chat is needed, and seen
    return session


def key_wait(session: PromptSession[str] | None, *, working: bool) -> None:
    """Esc stops the agent at once only if prompt-toolkit stops waiting for a second key."""
    if session is not None:
        session.app.timeoutlen = WORKING_KEY_WAIT_SECONDS if working else IDLE_KEY_WAIT_SECONDS


def _private_history(path: Path) -> FileHistory:
    """prompt_toolkit appends to the file with the umask's mode: it is made 0600 first."""
    os.close(open_private(path, os.O_WRONLY | os.O_APPEND))
    return FileHistory(path)
