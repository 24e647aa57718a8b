"""The built-in slash commands an editor may send as a prompt (`/compact`, `/undo`), and the
list of commands the editor is offered: those, the custom commands and the skills.

They are the chat's commands without its questions: the editor's user typed the command,
which is the go-ahead (`/undo` is the chat's `/undo --yes`; with the editor's file system a
text file it restores goes through the editor, so an open buffer gets it). A skill's
command asks the model to follow that skill, which it reads as it would when a task matches."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from di_code.agent.agent import Agent
from di_code.config.custom_commands import CommandSet
from di_code.config.skills import Skill
from di_code.session import NothingToCompact, compact_agent
from di_code.session.compaction import CompactionError
from di_code.session.prompt_notes import undo_note
from di_code.session.undo_plan import NothingToUndo, TextWriter, apply, plan
from di_code.system.names import escape_name

BUILT_IN_COMMANDS = {
    "compact": ("Summarize older turns to free context", "focus (optional)"),
    "undo": ("Take back the file changes of the last prompt that made any", "--force (optional)"),
    "model": ("Switch the model, as the Model option does", "PROVIDER/ID"),
    "permissions": ("Switch the permission mode, as the mode option does", "MODE"),
}
"""`/model` and `/permissions` change the session's config options (`config_options.py`)."""


@dataclass(frozen=True, slots=True)
class Done:
    said: str
    """What the editor's user is told."""
    for_model: str | None = None
    """What the model must read with the next prompt (files it edited are back)."""


def command_of(text: str) -> tuple[str, str] | None:
    """The built-in command a prompt's words name, and its argument; None for any other."""
    word, _, rest = text.strip().partition(" ")
    name = word.removeprefix("/")
    return (name, rest.strip()) if word.startswith("/") and name in BUILT_IN_COMMANDS else None


async def run_command(
    name: str, arg: str, agent: Agent, session: Any, write_text: TextWriter | None = None
) -> Done:
    """`write_text`: where `/undo` puts a restored text file (the editor's buffers)."""
    if name == "compact":
        return await _compact(agent, session, arg)
    if name == "undo":  # git and the files, off the loop (the editor is asked on it)
        return await asyncio.to_thread(_undo, session, arg, write_text)
    raise ValueError(f"not a conversation command: /{name}")


async def _compact(agent: Agent, session: Any, focus: str) -> Done:
    try:
        result = await compact_agent(agent, session, instructions=focus or None)
    except (NothingToCompact, CompactionError) as exc:
        return Done(f"Not compacted: {exc}")
    return Done(f"Compacted the conversation ({result.tokens_before} tokens before).")


def _undo(session: Any, arg: str, write_text: TextWriter | None) -> Done:
    """The files back as they were before the last prompt that changed any; files the user
    changed since are left alone unless `--force`. The files undone on disk (not through
    the editor) are named whole, for the editor to reload, each as the tools' output names
    files (`escape_name`): a newline in a name must not forge a line of the answer."""
    if arg not in ("", "--force"):
        return Done("Usage: /undo [--force]")
    if session is None:
        return Done("Undo needs a saved session (--no-session keeps no checkpoints).")
    try:
        undo_plan = plan(session, force=arg == "--force")
    except NothingToUndo as exc:
        return Done(f"{str(exc).capitalize()}.")
    lines = undo_plan.lines()
    if not undo_plan.actions:
        again = "" if arg else " (/undo --force overwrites the files you changed)"
        return Done("\n".join([*lines, f"Nothing undone: no file can be restored{again}."]))
    result = apply(session, undo_plan, write_text)
    number = undo_plan.target.number
    end = f"Prompt {number} is not fully undone." if result.failed else undo_plan.undid()
    note = undo_note(number, result.done) if result.done else None
    if result.on_disk:
        changed = ", ".join(escape_name(str(path)) for path in result.on_disk)
        end += f"\nChanged on disk (reload them where they are open): {changed}"
    return Done("\n".join([*lines, *result.done, *result.failed, end]), note)


def skill_prompt(skills: Sequence[Skill], text: str) -> str | None:
    """`/NAME task` for a skill as the prompt the model gets; None when no skill is named."""
    word, _, task = text.strip().partition(" ")
    for skill in skills:
        if word == f"/{skill.name}":
            ask = f"Use the skill {skill.name} (read {skill.path} first)"
            return f"{ask}: {task.strip()}" if task.strip() else f"{ask}."
    return None


def offered(commands: CommandSet, skills: Sequence[Skill]) -> list[AvailableCommand]:
    """The built-in commands, the custom ones and the skills (a name taken by an earlier
    kind is not offered again), for `available_commands_update`."""
    named = [(name, text, hint) for name, (text, hint) in BUILT_IN_COMMANDS.items()]
    named += [
        (c.name, c.description, c.argument_hint or "arguments") for c in commands.commands.values()
    ]
    taken = {name for name, _, _ in named}
    named += [(k.name, k.description, "task (optional)") for k in skills if k.name not in taken]
    return [
        AvailableCommand(
            name=name,
            description=description,
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)),
        )
        for name, description, hint in named
    ]
