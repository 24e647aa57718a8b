"""Telling the user that chat needs them: when a turn ends, or a question waits for an answer,
while the terminal is not focused.

Chat asks the terminal for focus reports (CSI ?1004h; off again at exit): it then sends
ESC [ I when its window gains the focus and ESC [ O when it loses it. prompt-toolkit knows
neither sequence: it would read ESC [ O as Esc (which stops the agent) followed by the
typed text `[O`. `read_focus_reports` maps both to prompt-toolkit's Keys.Ignore, as it maps
the sequences it ignores itself, and the key binding here reads which one came from the
key's data. Until the terminal says otherwise the window counts as focused: a terminal without
focus reports is never notified.

How the user is told is the `notify` setting: "auto" writes OSC 9 where TERM_PROGRAM (or
TERM) names a terminal that shows it as a desktop notification, OSC 777 for foot and urxvt,
else the bell; "bell" the bell always; "off" nothing; any other text is the user's own
command, run as a Notification hook is (the same payload on stdin, through the one launcher,
without the provider keys). The user's Notification hooks run at the same moments, whatever
`notify` says.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING

from rich.text import Text

from di_code.setup.session_events import hook_session
from di_code.system.safe_text import visible
from di_code.tools.policy.permissions import ApprovalRequest

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.output import Output
    from rich.console import Console

    from di_code.setup.prepared import Prepared
    from di_code.tools.policy.session_hooks import SessionHookRunner
    from di_code.ui.approval import ReplApprover, YesNo

FOCUS_REPORTS_ON, FOCUS_REPORTS_OFF = "\x1b[?1004h", "\x1b[?1004l"
FOCUS_IN, FOCUS_OUT = "\x1b[I", "\x1b[O"
BELL = "\x07"
WAITING = "di-code is waiting for your input"
OSC_9_PROGRAMS = frozenset({"iTerm.app", "WezTerm", "ghostty"})
"""TERM_PROGRAM values of terminals that show OSC 9 as a notification."""
OSC_9_TERMS = ("xterm-kitty", "xterm-ghostty", "wezterm")
OSC_777_TERMS = ("foot", "rxvt")
"""TERM prefixes of terminals that show OSC 777 `notify` (foot; urxvt with its extension)."""
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f;]")


def read_focus_reports() -> None:
    """Make prompt-toolkit read ESC [ I and ESC [ O as one ignored key each."""
    from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
    from prompt_toolkit.keys import Keys

    for sequence in (FOCUS_IN, FOCUS_OUT):
        ANSI_SEQUENCES.setdefault(sequence, Keys.Ignore)


def terminal_alert(message: str, env: Mapping[str, str], setting: str = "auto") -> str:
    """What to write to the terminal for `message`: OSC 9, OSC 777 or the bell."""
    if setting == "bell":
        return BELL
    text = _UNSAFE.sub(" ", message)[:200]
    program, term = env.get("TERM_PROGRAM", ""), env.get("TERM", "")
    if program in OSC_9_PROGRAMS or term.startswith(OSC_9_TERMS):
        return f"\x1b]9;{text}\x07"
    if term.startswith(OSC_777_TERMS):
        return f"\x1b]777;notify;di-code;{text}\x07"
    return BELL


class Attention:
    """Chat's notifier: the REPL tells it of focus reports, turn ends and questions."""

    def __init__(
        self,
        setup: Prepared,
        console: Console,
        approver: ReplApprover,
        env: Mapping[str, str] = os.environ,
    ) -> None:
        approver.waiting = self.question
        self.approver = approver
        self.setup = setup
        self.console = console
        self.env = env
        self.focused = True
        self.output: Output | None = None
        """The terminal (prompt-toolkit's output), once the prompt runs."""
        self._running: set[asyncio.Task[None]] = set()

    def start(self, output: Output) -> None:
        read_focus_reports()
        self.output = output
        self._write(FOCUS_REPORTS_ON)

    async def stop(self) -> None:
        """Focus reports off; a notify command or hook still running is ended."""
        self._write(FOCUS_REPORTS_OFF)
        for task in self._running:
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)

    def key_bindings(self) -> KeyBindings:
        from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
        from prompt_toolkit.keys import Keys

        bindings = KeyBindings()

        @bindings.add(Keys.Ignore)
        def _focus(event: KeyPressEvent) -> None:
            if event.data in (FOCUS_IN, FOCUS_OUT):
                self.focus(event.data == FOCUS_IN)

        return bindings

    def focus(self, focused: bool) -> None:
        """The terminal's focus changed. A question already waiting when the user looks away
        notifies then: the trust question is asked at start, before any focus report."""
        left = self.focused and not focused
        self.focused = focused
        if left and self.approver.pending is not None:
            self.question(self.approver.pending)

    def turn_ended(self) -> None:
        self._needed("idle_prompt", WAITING)

    def question(self, asked: ApprovalRequest | YesNo) -> None:
        if isinstance(asked, ApprovalRequest):
            message = f"di-code needs your permission to use {asked.tool_name}"
        else:
            message = "di-code is asking you a question"
        self._needed("permission_prompt", message)

    def _needed(self, kind: str, message: str) -> None:
        if self.focused:
            return
        setting = self.setup.notify
        hooks = self.setup.session_hooks
        if hooks is not None and hooks.wants("Notification"):
            self._in_background(self._tell(hooks, kind, message))
        if setting == "off":
            return
        if setting not in ("auto", "bell"):
            self._in_background(self._tell(self._command(setting), kind, message))
        else:
            self._alert(terminal_alert(message, self.env, setting))

    def _alert(self, sequence: str) -> None:
        """After what was printed before it (the answer the user is called back to): the
        printed lines' batch goes now, and the alert after it, in turn (di_code.ui.scrollback)."""
        from prompt_toolkit.application import run_in_terminal

        sys.stdout.flush()
        self._in_background(run_in_terminal(lambda: self._write(sequence)))

    def _write(self, sequence: str) -> None:
        """Straight to the terminal: none of these shows or moves the cursor."""
        if self.output is not None:
            self.output.write_raw(sequence)
            self.output.flush()

    def _command(self, command: str) -> SessionHookRunner:
        """The user's notify command, run as a Notification hook."""
        from di_code.tools.policy.hook_config import DEFAULT_HOOK_TIMEOUT, UserHook
        from di_code.tools.policy.session_hooks import SessionHookRunner

        hook = UserHook("Notification", None, command, DEFAULT_HOOK_TIMEOUT, "notify")
        return SessionHookRunner((hook,), self.setup.workspace, self._failed, self.setup.hidden_env)

    async def _tell(self, hooks: SessionHookRunner, kind: str, message: str) -> None:
        where = hook_session(self.setup.session)
        await hooks.tell("Notification", where, message=message, notification_type=kind)

    def _in_background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    def _failed(self, line: str) -> None:
        self.console.print(Text(f"! notify: {visible(line)}", style="yellow"), soft_wrap=True)
