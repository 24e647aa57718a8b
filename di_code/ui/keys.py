"""The REPL's keys: Enter (a trailing backslash continues the line), Alt+Enter for a new line,
Ctrl-C (abort the run, clear the line, or twice on an empty prompt quit), Shift+Tab (next
permission mode), and the answers while an approval question is open (`di_code.ui.approval`
says when a key counts as an answer; otherwise it is typed); Enter answers a yes/no question
no, its default; `q` after `v` (view all) goes back to the question, as it leaves a pager.
Esc is a screen key (`di_code.ui.screen_keys`): it stops the turn, an open question included,
except while the user types what the model should do instead (then it goes back to the
question)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from di_code.tools.policy.modes import MODE_CYCLE
from di_code.tools.policy.permissions import Approval
from di_code.ui.approval import ANSWER_KEYS, YesNo
from di_code.ui.approval_view import BACK_KEY

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from di_code.ui.chat_view import ChatView


def key_bindings(repl: ChatView) -> KeyBindings:
    from prompt_toolkit.application import get_app
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()
    approver = repl.approver
    answering = Condition(lambda: approver.keys_live(get_app().current_buffer.text))
    asking = Condition(lambda: approver.pending is not None)
    telling = Condition(lambda: approver.telling)

    @bindings.add("enter", filter=~telling)
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    @bindings.add("enter", filter=telling)
    def _tell(event: KeyPressEvent) -> None:
        instead = event.current_buffer.text.strip()
        event.current_buffer.reset()
        approver.answer(Approval(False, feedback=instead))

    @bindings.add("escape", "enter", filter=~asking)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        on_ctrl_c(repl, event)

    @bindings.add("s-tab")
    def _next_mode(event: KeyPressEvent) -> None:
        cycle_mode(repl)

    for key in ANSWER_KEYS:
        bindings.add(key, filter=answering)(lambda event, key=key: approver.press(key))
    viewed = Condition(lambda: approver.viewed)
    bindings.add(BACK_KEY, filter=answering & viewed)(lambda event: approver.invalidate())
    yes_no = Condition(lambda: isinstance(approver.pending, YesNo))
    bindings.add("enter", filter=answering & yes_no)(lambda event: approver.press("n"))

    @bindings.add("escape", filter=telling)
    def _back(event: KeyPressEvent) -> None:
        event.current_buffer.reset()
        approver.telling = False

    return bindings


def cycle_mode(repl: ChatView) -> None:
    """ask → accept-edits → plan → auto → ask; read-only (and no gate) stays as it is."""
    gate = repl.setup.gate
    if gate is None or gate.mode not in MODE_CYCLE:
        return
    repl.switch_mode(MODE_CYCLE[(MODE_CYCLE.index(gate.mode) + 1) % len(MODE_CYCLE)])


def on_ctrl_c(repl: ChatView, event: KeyPressEvent) -> None:
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
