"""Thinking during a chat. How hard the model thinks: `/thinking` and Alt+T step through the
levels (off → low → medium → high → off), `/thinking LEVEL` sets one; the next request carries
it (the agent's stream options) and the bottom line shows it. How it is shown: Ctrl-T."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

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


def toggle_folded(repl: ChatView) -> None:
    """Ctrl-T: thinking blocks from now on whole (and the last folded one at once, as its
    hint promises), or folded again."""
    renderer = repl.renderer
    whole = renderer.thinking_whole = not renderer.thinking_whole
    said = "shown whole" if whole else "folded (/expand thinking shows one whole)"
    repl.console.print(Text(f"Thinking is {said}; Ctrl-T switches.", style="dim"))
    if whole and renderer.thoughts.take_folded():
        repl.expand(thinking=True)
