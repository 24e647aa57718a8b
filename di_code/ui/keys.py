"""The REPL's keys: Enter (a trailing backslash continues the line), Alt+Enter for a new line,
Ctrl-C (abort the run, clear the line, or twice on an empty prompt quit), and y/a/n/Esc while
an approval question is open."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from di_code.ui.approval import ANSWER_KEYS

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from di_code.ui.repl import Repl


def key_bindings(repl: Repl) -> KeyBindings:
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()
    asking = Condition(lambda: repl.approver.pending is not None)

    @bindings.add("enter", filter=~asking)
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    @bindings.add("escape", "enter", filter=~asking)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        on_ctrl_c(repl, event)

    for key, answer in ANSWER_KEYS.items():
        bindings.add(key, filter=asking)(lambda event, answer=answer: repl.approver.answer(answer))
    bindings.add("escape", filter=asking)(lambda event: repl.approver.answer("no"))
    return bindings


def on_ctrl_c(repl: Repl, event: KeyPressEvent) -> None:
    buffer = event.current_buffer
    if repl.busy:
        repl.abort()
    elif buffer.text:
        buffer.reset()
    elif repl.exit_armed:
        event.app.exit(exception=EOFError())
    else:
        repl.exit_armed = True
        repl.console.print(Text("Press Ctrl-C again to exit.", style="dim"))
