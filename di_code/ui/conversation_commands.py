"""The slash commands that change the conversation itself: /clear, /model, /session,
/resume and /compact (they wait until the agent is idle, but /session)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text

from di_code.ai.stream import close_provider
from di_code.session import CompactionError, NothingToCompact, compact_agent
from di_code.setup.session_events import session_ended, session_started
from di_code.system.abort import AbortController
from di_code.system.safe_text import visible
from di_code.ui.command_lines import fail, say

if TYPE_CHECKING:
    from di_code.config.model_choices import ModelChoice
    from di_code.ui.chat_view import ChatView


async def clear_command(repl: ChatView, arg: str) -> bool:
    setup = repl.setup
    await session_ended(setup, "clear")
    session = setup.store.create(setup.workspace, "chat") if setup.store is not None else None
    repl.clear_screen()
    repl.replace_agent([], session)
    await session_started(setup, "clear")
    suffix = f" {session.id}" if session is not None else " (not saved)"
    return say(repl, f"New session{suffix}.")


async def model_command(repl: ChatView, arg: str) -> bool:
    agent = repl.agent
    if not arg:
        return say(
            repl, model_list(f"{agent.model.provider}/{agent.model.id}", repl.setup.models())
        )
    if repl.setup.switch_model is None:
        raise ValueError("Switching models is not available here.")
    old = agent.provider
    agent.provider, agent.model = repl.setup.switch_model(arg)
    if agent.provider is not old:
        await close_provider(old)
    repl.renderer.model = agent.model
    return say(repl, f"Model: {agent.model.provider}/{agent.model.id}")


async def session_command(repl: ChatView, arg: str) -> bool:
    session = repl.setup.session
    lines = (
        [f"Session: {session.id}", f"File: {session.path}"]
        if session is not None
        else ["Session: not saved (--no-session)"]
    )
    lines += [f"Messages: {len(repl.agent.transcript)}", repl.renderer.footer()]
    return say(repl, "\n".join(lines))


async def resume_command(repl: ChatView, arg: str) -> bool:
    setup = repl.setup
    if setup.store is None:
        raise ValueError("Sessions are off (--no-session).")
    recent = setup.store.list(setup.workspace, limit=10)
    if not arg:
        if not recent:
            return say(repl, "No saved sessions in this folder.")
        rows = [
            f"  {n}. {s.id[:8]}  {time.strftime('%Y-%m-%d %H:%M', time.localtime(s.modified))}"
            f"  {s.message_count:>4} msgs  {s.first_prompt[:40]}"
            for n, s in enumerate(recent, 1)
        ]
        return say(repl, "\n".join(["Recent sessions (/resume N or /resume ID):", *rows]))
    from di_code.session.store import session_id_of

    path = setup.store.pick(arg, setup.workspace)
    if setup.session is not None and session_id_of(path) == setup.session.id:
        return say(repl, f"Already in session {setup.session.id}.")
    session = setup.store.open(path, setup.workspace)
    for warning in session.warnings:
        repl.console.print(Text(f"! {visible(warning)}", style="yellow"))
    messages = session.context()
    repl.replace_agent(messages, session)
    await session_started(setup, "resume")
    count = f"{len(messages)} message{'s' if len(messages) != 1 else ''}"
    return say(repl, f"Resumed session {session.id} ({count}).")


async def compact_command(repl: ChatView, arg: str) -> bool:
    """Asked for, it compacts whatever the size: all but the last message becomes a summary
    (the automatic one keeps the recent turns whole)."""
    if not repl.agent.transcript:
        return say(repl, "Nothing to compact: the conversation is empty.")

    async def work(controller: AbortController) -> None:
        try:
            result = await compact_agent(
                repl.agent,
                repl.setup.session,
                instructions=arg or None,
                signal=controller.signal,
                keep_recent_tokens=0,
            )
        except NothingToCompact:
            fail(repl, "Nothing to compact: all before the last reply is one summary already.")
            return
        except CompactionError as exc:
            fail(repl, str(exc))
            return
        say(repl, f"Compacted {result.tokens_before} tokens into a summary.")

    repl.console.print(Text("Compacting…", style="dim"))
    repl.start(work)
    return True


def model_list(current: str, choices: list[ModelChoice]) -> str:
    """The current model, then the configured and known ones; a missing key is named."""
    rows = [f"Model: {current}", "Models (/model PROVIDER/ID switches; Tab completes):"]
    width = max((len(choice.spec) for choice in choices), default=0)
    for choice in choices:
        mark = "*" if choice.spec == current else " "
        needs = f"  (set {choice.missing_key})" if choice.missing_key else ""
        rows.append(f" {mark} {choice.spec:<{width}}{needs}".rstrip())
    return "\n".join(rows)
