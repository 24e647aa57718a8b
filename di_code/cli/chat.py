"""The body of `di-code chat`: refuse without a terminal, prepare the agent, run the REPL.

What the chat needs on its way to the first prompt (the set-up, the REPL, prompt-toolkit,
Rich) is imported with this module, before the event loop starts: all of it comes before the
prompt anyway, and inside the loop each import would hold it while Ctrl-C and every other
task wait (the HTTP stack is imported at the first request, off the loop: system/first_use.py)."""

from __future__ import annotations

import sys

from rich.console import Console

from di_code.cli.output import notify_stderr
from di_code.cli.prompt_input import UsageError
from di_code.cli.trust_now import trust_applier
from di_code.config.trusting import trust_offer
from di_code.session import SessionStore
from di_code.setup.flags import CliOptions
from di_code.setup.prepare import close_prepared, prepare
from di_code.setup.session_events import session_ended, session_started
from di_code.system import left_behind
from di_code.system.private_files import private_folder
from di_code.system.stop_signals import until_stopped
from di_code.ui.approval import ReplApprover
from di_code.ui.repl import Repl
from di_code.ui.slash_commands import show_startup_warnings

NO_TERMINAL = (
    'chat needs a terminal (stdin and stdout); for piped or scripted use run `di-code run "PROMPT"`'
)


def run_chat(options: CliOptions) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(NO_TERMINAL)
    return left_behind.run(_chat(options))


async def _chat(options: CliOptions) -> int:
    console = Console()
    approver = ReplApprover(console)
    prepared = await prepare(options, approver=approver, notify=notify_stderr, chat=True)
    show_startup_warnings(console, prepared.workspace)
    if prepared.session is not None:
        prepared.store = SessionStore(prepared.home)
    prepared.trust_offer = trust_offer(prepared.home, prepared.workspace)
    prepared.apply_trust = trust_applier(prepared, options)
    history = private_folder(prepared.home) / "history"  # typed prompts: a pasted key too
    repl = Repl(prepared, console, history=history, approver=approver)
    reason = "other"
    try:
        await session_started(prepared, options.session_source)
        code = await until_stopped(repl.run())
        reason = "prompt_input_exit" if code == 0 else "other"  # else a signal stopped it
        return code
    finally:
        await session_ended(prepared, reason)
        await close_prepared(prepared, repl.agent.provider)
