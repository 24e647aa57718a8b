"""Slash commands of the REPL (README, Chat). Each handler returns False to quit the REPL.

Commands that change the conversation (/clear, /resume, /model, /compact) wait until the agent
is idle; the others answer at once. Every failure is one red line.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.padding import Padding
from rich.text import Text

from di_code.config.custom_commands import CommandSet, load_commands
from di_code.config.settings import ConfigError, di_code_home
from di_code.session import (
    CompactionError,
    Session,
    SessionError,
)
from di_code.session.checkpoint_list import PromptCheckpoint, prompt_checkpoints
from di_code.session.prompt_notes import undo_note
from di_code.session.undo_plan import NothingToUndo, UndoPlan, apply, plan
from di_code.system.safe_text import visible, visible_line
from di_code.tools.policy.modes import MODE_CYCLE
from di_code.ui.command_lines import fail as _fail
from di_code.ui.command_lines import say as _say
from di_code.ui.conversation_commands import (
    clear_command,
    compact_command,
    model_command,
    resume_command,
    session_command,
)
from di_code.ui.export import export_command
from di_code.ui.fork_command import fork_command
from di_code.ui.jobs_command import jobs_command
from di_code.ui.review_command import review_command
from di_code.ui.thinking_level import thinking_command
from di_code.ui.tree_command import tree_command

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from di_code.system.abort import AbortController
    from di_code.ui.chat_view import ChatView

Handler = Callable[["ChatView", str], Awaitable[bool]]


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    usage: str
    summary: str
    handler: Handler
    needs_idle: bool = False


async def run_command(repl: ChatView, line: str) -> bool:
    name, _, arg = line.partition(" ")
    command = COMMANDS.get(name)
    if command is None:
        return await _user_command(repl, name, arg)
    if command.needs_idle and repl.busy:
        return _fail(repl, f"{name} waits until the agent is done (Ctrl-C stops it).")
    try:
        return await command.handler(repl, arg.strip())
    except (ConfigError, SessionError, CompactionError, ValueError) as exc:
        return _fail(repl, str(exc))


def user_commands(repl: ChatView) -> CommandSet:
    """The user's command files, read again each time so a new or edited file counts at once."""
    return load_commands(di_code_home(), repl.setup.workspace, reserved=COMMANDS)


def show_startup_warnings(console: Console, workspace: Path) -> None:
    """Command files skipped or hidden by a built-in: said once, when the chat starts."""
    for warning in load_commands(di_code_home(), workspace, reserved=COMMANDS).warnings:
        console.print(Text(f"! {visible(warning)}", style="yellow"), soft_wrap=True)


async def _user_command(repl: ChatView, name: str, arg: str) -> bool:
    command = user_commands(repl).commands.get(name[1:])
    default = DEFAULT_COMMANDS.get(name)
    if command is None and default is not None:
        if repl.busy:
            return _fail(repl, f"{name} waits until the agent is done (Ctrl-C stops it).")
        try:
            return await default.handler(repl, arg.strip())
        except ValueError as exc:
            return _fail(repl, str(exc))
    if command is None:
        return _fail(repl, f"Unknown command {visible(name)}. /help lists the commands.")
    prompt = command.expand(arg)
    if not prompt.strip():
        return _fail(repl, f"{name}: its command file has no text")
    if prompt.lstrip().startswith("/"):
        return _fail(repl, f"{name}: its template starts with / (a command cannot run another)")
    return await repl.submit(prompt)


HELP_KEYS = (
    "Enter submits; Alt+Enter or a trailing \\ adds a line; @path completes a file.",
    "While the agent works, Enter queues a steering message; Ctrl-C or Esc aborts the run.",
    "Shift+Tab changes the permission mode (ask, accept-edits, plan, auto).",
    "Ctrl-O shows the full output of the last tool call.",
    "Ctrl-T shows thinking whole or folded, /expand thinking [N] one block; Alt+T steps its level.",
    "!command runs a shell command here and adds its output to your next prompt.",
    "Ctrl-C twice on an empty prompt, Ctrl-D or /exit quits.",
)


async def _help(repl: ChatView, arg: str) -> bool:
    """Two aligned columns whose summaries wrap under themselves on a narrow terminal."""
    from rich.console import Group
    from rich.table import Table

    def rows(pairs: list[tuple[str, str]]) -> Table:
        table = Table.grid(padding=(0, 1))
        table.add_column(no_wrap=True)
        table.add_column()
        for usage, summary in pairs:
            table.add_row(Text(usage), Text(summary))
        return table

    def indented(renderable: Table | Text) -> Padding:
        return Padding(renderable, (0, 0, 0, 2))

    mine = user_commands(repl).commands
    defaults = [c for c in DEFAULT_COMMANDS.values() if c.name[1:] not in mine]
    builtin = [(c.usage, c.summary) for c in (*COMMANDS.values(), *defaults)]
    own = [
        (visible(f"/{c.name} {c.argument_hint}".strip()), visible(c.description))
        for c in mine.values()
    ]
    parts: list[RenderableType] = [Text("Commands:"), indented(rows(builtin))]
    if own:
        parts += [Text("Your commands:"), indented(rows(own))]
    parts += [Text("Keys:"), *(indented(Text(line)) for line in HELP_KEYS)]
    repl.console.print(Group(*parts), markup=False, highlight=False)
    return True


async def _exit(repl: ChatView, arg: str) -> bool:
    return False


async def _expand(repl: ChatView, arg: str) -> bool:
    what, _, number = arg.partition(" ")
    thinking = what == "thinking"
    number = number.strip() if thinking else what
    if number and not number.isdigit():
        raise ValueError(
            "Usage: /expand [thinking] [N] (N counts tool calls, or thinking, from 1)."
        )
    repl.expand(int(number) if number else None, thinking=thinking)
    return True


async def _tools(repl: ChatView, arg: str) -> bool:
    rows = [f"  {tool.name:<8} {_first_sentence(tool.description)}" for tool in repl.agent.tools]
    return _say(repl, "\n".join(["Tools:", *rows]) if rows else "No tools.")


NO_SKILLS = "No skills: a skill is a folder with a SKILL.md in .di-code/skills or .agents/skills."


async def _skills(repl: ChatView, arg: str) -> bool:
    from di_code.config.skills import load_skills

    found = load_skills(di_code_home(), repl.setup.workspace)
    rows = [
        f"  {visible(skill.name)}: {visible(_first_sentence(skill.description))}\n"
        f"    {visible_line(str(skill.path))}"
        for skill in found.skills
    ]
    rows += [f"  ! {visible(warning)}" for warning in found.warnings]
    title = "Skills (the model reads one when a task matches):" if found.skills else NO_SKILLS
    return _say(repl, "\n".join([title, *rows]))


async def _trust(repl: ChatView, arg: str) -> bool:
    from di_code.ui.trust_question import trust_now

    await trust_now(repl)
    return True


def _first_sentence(text: str, limit: int = 68) -> str:
    sentence = (text.strip().splitlines() or [""])[0].split(". ")[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


async def _permissions(repl: ChatView, arg: str) -> bool:
    gate = repl.setup.gate
    if gate is None:
        return _say(repl, "Permissions: every tool runs without asking.")
    verb, _, rest = arg.partition(" ")
    if verb == "revoke":
        revoked = gate.revoke(rest.strip() or "all")
        return _say(repl, "Revoked: " + (", ".join(map(str, revoked)) or "nothing"))
    if arg:
        if arg not in MODE_CYCLE or gate.mode == "read-only":
            raise ValueError(
                f"/permissions can switch between {', '.join(MODE_CYCLE)} (read-only is fixed)."
            )
        repl.switch_mode(MODE_CYCLE[MODE_CYCLE.index(arg)])
    rules = [f"  allow {rule}" for rule in gate.rules.allow]
    rules += [f"  deny {rule}" for rule in gate.rules.deny]
    grants = [f"  {number}. {rule}" for number, rule in enumerate(gate.grants, 1)]
    lines = [f"Permission mode: {gate.mode}"]
    if repl.setup.bash_state is not None:
        lines.append(f"Bash runs {repl.setup.bash_state()}")
    lines += [*rules, "Granted for this session:"]
    lines += grants or ["  none"]
    if grants:
        lines.append("  /permissions revoke N|all takes a grant back")
    return _say(repl, visible("\n".join(lines)))


async def _undo(repl: ChatView, arg: str) -> bool:
    words = arg.split()
    if not set(words) <= {"--force", "--yes"}:
        raise ValueError("Usage: /undo [--force] [--yes]")
    force, yes = "--force" in words, "--yes" in words
    return _restore_files(repl, None, force=force, yes=yes, conversation_stays=True)


def _restore_files(
    repl: ChatView, to: int | None, *, force: bool, yes: bool, conversation_stays: bool
) -> bool:
    """Files back to before prompt `to` (None: the last that changed any): the plan is shown,
    then carried out once the user says yes. While the conversation still holds the turns
    that made the changes, the model is told with the next prompt, else it would build on
    edits that no longer stand."""
    session = _saved_session(repl)
    try:
        undo_plan = plan(session, to=to, force=force)
    except NothingToUndo as exc:
        return _say(repl, f"{str(exc).capitalize()}.")
    _say(repl, "\n".join(visible(line) for line in undo_plan.lines()))
    if not undo_plan.actions:
        again = "" if force else " (--force overwrites the files you changed)"
        return _fail(repl, f"Nothing undone: no file can be restored{again}.")

    if yes:
        return _apply_plan(repl, session, undo_plan, conversation_stays)

    async def ask_first(controller: AbortController) -> None:
        from di_code.ui.approval import YesNo

        if await repl.approver.confirm(YesNo("Undo this? y/N")):
            _apply_plan(repl, session, undo_plan, conversation_stays)
        else:
            _say(repl, "Not undone.")

    repl.start(ask_first)
    return True


def _apply_plan(
    repl: ChatView, session: Session, undo_plan: UndoPlan, conversation_stays: bool
) -> bool:
    result = apply(session, undo_plan)
    lines = [visible(line) for line in result.done + result.failed]
    number = undo_plan.target.number
    if conversation_stays and result.done:
        repl.notes_for_model.append(undo_note(number, result.done))
    if result.failed:
        return _fail(repl, "\n".join([*lines, f"Prompt {number} is not fully undone."]))
    return _say(repl, "\n".join([*lines, visible(undo_plan.undid())]))


def _saved_session(repl: ChatView) -> Session:
    session = repl.setup.session
    if session is None:
        raise ValueError("Undo needs a saved session (--no-session keeps no checkpoints).")
    return session


REWIND_SCOPES = ("both", "files", "conversation")


async def _rewind(repl: ChatView, arg: str) -> bool:
    session = _saved_session(repl)
    checkpoints = prompt_checkpoints(session)
    words = arg.split()
    if not words:
        if not checkpoints:
            return _say(repl, "No prompts to rewind to yet.")
        rows = [f"  {checkpoint_row(c)}" for c in checkpoints]
        usage = "/rewind N [files|conversation|both] goes back to before prompt N:"
        return _say(repl, "\n".join([usage, *rows]))
    scope = words[1] if len(words) > 1 else "both"
    if not words[0].isdigit() or scope not in REWIND_SCOPES or words[2:] not in ([], ["--force"]):
        raise ValueError("Usage: /rewind [N [files|conversation|both] [--force]]")
    target = next((c for c in checkpoints if c.number == int(words[0])), None)
    if target is None:
        raise ValueError(f"No prompt {words[0]} in this session (/rewind lists them).")
    if scope != "conversation":
        force = words[2:] == ["--force"]
        _restore_files(
            repl, target.number, force=force, yes=True, conversation_stays=scope == "files"
        )
    if scope != "files":
        session.switch_to(target.leaf_id)
        repl.replace_agent(session.context(), session)
        session.append_checkpoint(target.number, "rewind", target.kind, target.before)
        _say(repl, f"The conversation is back to before prompt {target.number}.")
    return True


CHANGED_MARK = "*"


def checkpoint_row(checkpoint: PromptCheckpoint) -> str:
    """One row of a checkpoint list: number, time, whether it changed files (CHANGED_MARK),
    the first line the user typed, undone or not."""
    when = time.strftime("%m-%d %H:%M", time.localtime(checkpoint.timestamp / 1000))
    mark = CHANGED_MARK if checkpoint.changed else " "
    undone = "  (files undone)" if checkpoint.undone else ""
    return f"{checkpoint.number:>3}. {when} {mark} {visible(checkpoint.title)}{undone}"


async def _mcp(repl: ChatView, arg: str) -> bool:
    servers = repl.setup.mcp
    lines = servers.status_lines() if servers is not None else ["No MCP servers configured."]
    return _say(repl, "\n".join(visible(line) for line in lines))


async def _lsp(repl: ChatView, arg: str) -> bool:
    from di_code.tools.lsp.manager import status_lines

    servers = repl.setup.lsp
    lines = status_lines(servers) if servers is not None else ["No language servers."]
    return _say(repl, "\n".join(visible(line) for line in lines))


COMMANDS: dict[str, Command] = {
    command.name: command
    for command in (
        Command("/help", "/help", "this list", _help),
        Command("/exit", "/exit", "quit", _exit),
        Command("/clear", "/clear", "start a new session", clear_command, needs_idle=True),
        Command("/model", "/model [provider/id]", "pick or switch the model", model_command, True),
        Command("/thinking", "/thinking [LEVEL]", "step or set thinking level", thinking_command),
        Command("/session", "/session", "this session: id, file, usage", session_command),
        Command("/resume", "/resume [N|id]", "pick or resume a session", resume_command, True),
        Command("/compact", "/compact [focus]", "summarize older turns", compact_command, True),
        Command(
            "/expand",
            "/expand [thinking] [N]",
            "the last (Nth) tool call or thinking whole",
            _expand,
        ),
        Command("/tools", "/tools", "the tools the model may use", _tools),
        Command("/skills", "/skills", "the skills the model may read", _skills),
        Command(
            "/trust",
            "/trust",
            "trust this project's settings and .mcp.json",
            _trust,
            needs_idle=True,
        ),
        Command(
            "/permissions", "/permissions [MODE|revoke N|all]", "mode, rules, grants", _permissions
        ),
        Command("/mcp", "/mcp", "MCP servers, their state and tools", _mcp),
        Command("/lsp", "/lsp", "language servers, their state, what is missing", _lsp),
        Command("/jobs", "/jobs [kill N]", "background jobs, their last lines", jobs_command),
        Command(
            "/undo",
            "/undo [--force] [--yes]",
            "take back the files of the last prompt",
            _undo,
            True,
        ),
        Command("/rewind", "/rewind [N [scope]]", "go back to before prompt N", _rewind, True),
        Command("/export", "/export [PATH]", "save the chat as a file", export_command, True),
        Command("/fork", "/fork [N]", "a new session from here or prompt N", fork_command, True),
        Command("/tree", "/tree", "the session's branches: move to another", tree_command, True),
    )
}
DEFAULT_COMMANDS: dict[str, Command] = {
    "/review": Command(
        "/review",
        "/review [--base BRANCH | --commit SHA]",
        "review the changes, reading only",
        review_command,
        needs_idle=True,
    )
}
"""Built-in commands a command file of the same name replaces (the user's own /review)."""
