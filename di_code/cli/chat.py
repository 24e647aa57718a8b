"""The body of `di-code chat`: refuse without a terminal, prepare the agent, run the REPL."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Awaitable
from dataclasses import replace

from di_code.ai.stream import Provider
from di_code.ai.types import Model
from di_code.cli.flags import CliOptions
from di_code.config.settings import ConfigError, Settings

EXIT_USAGE = 2
NO_TERMINAL = (
    "di-code: chat needs a terminal (stdin and stdout); "
    'for piped or scripted use run `di-code run "PROMPT"`'
)


def run_chat(options: CliOptions) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(NO_TERMINAL, file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(_chat(options))


async def _chat(options: CliOptions) -> int:
    from rich.console import Console

    from di_code.ai.private_files import private_folder
    from di_code.cli.setup import close_prepared, prepare
    from di_code.cli.trust_now import trust_applier
    from di_code.config.model_choices import model_choices
    from di_code.config.trusting import held_back
    from di_code.session import SessionStore
    from di_code.ui.approval import ReplApprover
    from di_code.ui.chat_view import ChatSetup
    from di_code.ui.repl import Repl
    from di_code.ui.slash_commands import show_startup_warnings

    console = Console()
    approver = ReplApprover(console)
    prepared = await prepare(options, approver=approver, chat=True)
    show_startup_warnings(console, prepared.workspace)
    setup = ChatSetup(
        agent=prepared.agent,
        session=prepared.session,
        store=SessionStore(prepared.home) if prepared.session is not None else None,
        gate=prepared.gate,
        workspace=prepared.workspace,
        attach_session=prepared.attach_session,
        mcp=prepared.mcp,
        switch_model=lambda spec: _switch_model(spec, prepared.settings),
        models=lambda: model_choices(prepared.settings, os.environ),
        held_back=held_back(prepared.home, prepared.workspace),
        bash_state=prepared.bash.state if prepared.bash is not None else None,
    )
    setup.apply_trust = trust_applier(prepared, options, setup)
    history = private_folder(prepared.home) / "history"  # typed prompts: a pasted key too
    repl = Repl(setup, console, history=history, approver=approver)
    try:
        return await _until_stop_signal(repl.run())
    finally:
        await close_prepared(replace(prepared, mcp=setup.mcp), repl.agent.provider)


async def _until_stop_signal(chat: Awaitable[int]) -> int:
    """SIGTERM or SIGHUP (a closed terminal) end the chat like /exit, whose clean-up aborts a
    running prompt and saves it; the exit code is then 128 + the signal's number."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    received: list[int] = []

    def handle(number: int) -> None:
        received.append(number)
        if task is not None:
            task.cancel()

    for number in (signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(number, handle, number)
    try:
        return await chat
    except asyncio.CancelledError:
        if not received:
            raise
        return 128 + received[0]
    finally:
        for number in (signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(number)


def _switch_model(spec: str, settings: Settings) -> tuple[Provider, Model]:
    """/model provider/id: resolved like --model, with the same keys and settings."""
    from di_code.cli.model_setup import make_provider
    from di_code.config.selection import ModelRequest, select_model

    selection = select_model(ModelRequest(model=spec), settings, os.environ)
    if selection is None:
        raise ConfigError(f"no provider for {spec!r}: use PROVIDER/ID")
    return make_provider(selection), selection.model
