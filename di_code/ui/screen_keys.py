"""The REPL's screen keys, next to the line-editing ones in `di_code.ui.keys`: Esc aborts
the run like Ctrl-C in every state (an open question is answered no and the turn stops with
it), Ctrl-O shows the full output of the last tool call, Ctrl-T shows the thinking whole or
folded, Alt+T asks for the next thinking level, and a long paste shows in the input as one
`[pasted N lines]` placeholder (the whole text is sent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from di_code.ui.thinking_level import THINKING_KEY, set_thinking, toggle_folded

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from di_code.ui.chat_view import ChatView


def screen_bindings(repl: ChatView) -> KeyBindings:
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    bindings = KeyBindings()
    working = Condition(lambda: repl.busy and not repl.approver.telling)

    @bindings.add("escape", filter=working)
    def _escape(event: KeyPressEvent) -> None:
        repl.abort()

    @bindings.add("c-o")
    def _expand(event: KeyPressEvent) -> None:
        repl.expand()

    @bindings.add("c-t")
    def _thinking(event: KeyPressEvent) -> None:
        toggle_folded(repl)

    @bindings.add(*THINKING_KEY)
    def _thinking_level(event: KeyPressEvent) -> None:
        repl.console.print(Text(set_thinking(repl), style="dim"))

    @bindings.add(Keys.BracketedPaste)
    def _paste(event: KeyPressEvent) -> None:
        text = event.data.replace("\r\n", "\n").replace("\r", "\n")
        event.current_buffer.insert_text(repl.pastes.placeholder(text))

    return bindings
