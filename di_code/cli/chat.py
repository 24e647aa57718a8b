"""The body of `di-code chat`: refuse without a terminal, prepare the agent, run the REPL."""

from __future__ import annotations

import asyncio
import os
import sys

from di_code.ai.stream import Provider, close_provider
from di_code.ai.types import Model
from di_code.cli.options import CliOptions
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

    from di_code.cli.setup import prepare
    from di_code.session import SessionStore
    from di_code.ui.approval import ReplApprover
    from di_code.ui.commands import show_startup_warnings
    from di_code.ui.repl import ChatSetup, Repl

    console = Console()
    approver = ReplApprover(console)
    prepared = await prepare(options, approver=approver)
    show_startup_warnings(console, prepared.workspace)
    setup = ChatSetup(
        agent=prepared.agent,
        session=prepared.session,
        store=SessionStore(prepared.home) if prepared.session is not None else None,
        gate=prepared.gate,
        workspace=prepared.workspace,
        attach_session=prepared.attach_session,
        switch_model=lambda spec: _switch_model(spec, prepared.settings),
    )
    prepared.home.mkdir(parents=True, exist_ok=True)
    repl = Repl(setup, console, history=prepared.home / "history", approver=approver)
    try:
        return await repl.run()
    finally:
        await close_provider(repl.agent.provider)


def _switch_model(spec: str, settings: Settings) -> tuple[Provider, Model]:
    """/model provider/id: resolved like --model, with the same keys and settings."""
    from di_code.cli.setup import make_provider
    from di_code.config.selection import ModelRequest, select_model

    selection = select_model(ModelRequest(model=spec), settings, os.environ)
    if selection is None:
        raise ConfigError(f"no provider for {spec!r}: use PROVIDER/ID")
    return make_provider(selection), selection.model
