"""How hard the model thinks, changed during a chat: `/thinking` and Alt+T step through the
levels (off → low → medium → high → off), `/thinking LEVEL` sets one. The next request carries
it (the agent's stream options); the bottom line shows it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from di_code.config.settings import REASONING_LEVELS
from di_code.ui.command_lines import say

if TYPE_CHECKING:
    from di_code.ui.chat_view import ChatView

THINKING_KEY = ("escape", "t")
"""Alt+T (Esc then T): Ctrl-T already shows thinking whole or folded."""


async def thinking_command(repl: ChatView, arg: str) -> bool:
    if arg and arg not in REASONING_LEVELS:
        raise ValueError(f"/thinking takes one of {', '.join(REASONING_LEVELS)}.")
    return say(repl, set_thinking(repl, arg or None))


def set_thinking(repl: ChatView, level: str | None = None) -> str:
    """The level set (None: the next one), and the line that says it."""
    options = repl.agent.options
    now = REASONING_LEVELS.index(options.reasoning)
    chosen = REASONING_LEVELS[(now + 1) % len(REASONING_LEVELS)] if level is None else level
    options.reasoning = REASONING_LEVELS[REASONING_LEVELS.index(chosen)]
    repl.invalidate()
    model = repl.agent.model
    unused = "" if model.reasoning else f" (not sent: {model.id} is not known to think)"
    return f"Thinking: {options.reasoning}{unused}"
