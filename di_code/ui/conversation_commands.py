"""The slash commands that change the conversation itself: /clear, /model, /session,
/resume and /compact (they wait until the agent is idle, but /session)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from di_code.session import CompactionError, NothingToCompact, compact_agent
from di_code.setup.model_switch import switch_model
from di_code.setup.session_events import session_ended, session_started
from di_code.system.abort import AbortController
from di_code.system.safe_text import visible
from di_code.ui.command_lines import fail, say
from di_code.ui.footer import short_count

if TYPE_CHECKING:
    from di_code.session.session_lines import SessionLine
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
    """`/model PROVIDER/ID` switches; `/model` alone opens the list to pick from."""
    if repl.setup.switch_model is None and not arg:
        return say(repl, f"Model: {_current(repl)}")
    spec = arg or await _picked_model(repl)
    if spec is None:
        return say(repl, f"Model: {_current(repl)} (unchanged)")
    await switch_model(repl.setup, spec)
    repl.renderer.model = repl.agent.model
    return say(repl, f"Model: {_current(repl)}")


def _current(repl: ChatView) -> str:
    return f"{repl.agent.model.provider}/{repl.agent.model.id}"


async def _picked_model(repl: ChatView) -> str | None:
    """The configured and known models, the current one marked, a missing key named."""
    from di_code.ui.list_picker import PickItem

    current = _current(repl)
    items = [
        PickItem(
            choice.spec,
            choice.spec,
            f"(set {choice.missing_key})" if choice.missing_key else "",
            current=choice.spec == current,
        )
        for choice in repl.setup.models()
    ]
    if not any(item.current for item in items):  # a model found on a local server
        items.insert(0, PickItem(current, current, current=True))
    return await repl.pick(f"Model (now {current})", items)


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
    """`/resume N|ID` resumes that session; `/resume` alone opens this folder's sessions to
    pick from."""
    setup = repl.setup
    if setup.store is None:
        raise ValueError("Sessions are off (--no-session).")
    from di_code.session.session_lines import pick
    from di_code.session.store import session_id_of

    path = pick(setup.store, arg, setup.workspace) if arg else await _picked_session(repl)
    if path is None:
        return True
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


async def _picked_session(repl: ChatView) -> Path | None:
    """Each session of this folder as its first prompt, when it was last written and its
    size, the newest first; None when there is none or the user leaves the list."""
    from di_code.session.session_lines import numbered, session_lines
    from di_code.ui.list_picker import PickItem

    setup = repl.setup
    assert setup.store is not None
    lines = await asyncio.to_thread(session_lines, setup.store, setup.workspace)
    if not lines:
        say(repl, "No saved sessions in this folder.")
        return None
    current = setup.session.id if setup.session is not None else None
    readable = numbered(lines)
    numbers = {line.path: number for number, line in enumerate(readable, 1)}
    items = [
        PickItem(_label(line, numbers.get(line.path)), line.path, _detail(line), line.id == current)
        for line in lines
    ]
    return await repl.pick("Resume a session", items)


def _label(line: SessionLine, number: int | None) -> str:
    """The first prompt, after the number `/resume N` takes for it (the newest ten)."""
    if line.first_prompt is None:
        return "(unreadable session file)"
    prompt = line.first_prompt or "(no prompt yet)"
    return prompt if number is None else f"{number}. {prompt}"


def _detail(line: SessionLine) -> str:
    """When it was last written, its size, its id's start (what /resume ID takes)."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(line.modified))
    return f"{when} · {short_count(line.size)}B · {line.id[:8]}"


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
