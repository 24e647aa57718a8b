"""`di-code undo`: take back what the newest prompt that changed files (in this folder's newest
session) changed. The plan is printed first and, on a terminal, confirmed; `--yes` is for
scripts.

Exit codes: 0 undone (or listed); 1 nothing to undo, nothing undone (declined, no terminal to
ask, only files the user changed) or a restore failed; 2 a bad session id.
"""

from __future__ import annotations

import sys
from pathlib import Path

from di_code.config.settings import ConfigError, di_code_home
from di_code.session import Session, SessionError, SessionStore
from di_code.session.checkpoint_list import prompt_checkpoints
from di_code.session.undo_plan import NothingToUndo, apply, in_line, plan
from di_code.system.safe_text import visible
from di_code.ui.slash_commands import CHANGED_MARK, checkpoint_row

EXIT_OK, EXIT_NOTHING = 0, 1


def undo_command(
    session_id: str | None, list_only: bool, to: int | None, force: bool, yes: bool = False
) -> int:
    session = _session(session_id, write=not list_only)
    if session is None:
        _say("no session in this folder to undo")
        return EXIT_NOTHING
    for warning in session.warnings:  # lines skipped while loading: the rest is listed
        _say(warning)
    if list_only:
        return _list(session)
    try:
        undo_plan = plan(session, to=to, force=force)
    except NothingToUndo as exc:
        _say(str(exc))
        return EXIT_NOTHING
    for line in undo_plan.lines():
        print(visible(line))
    if not undo_plan.actions:
        forced = " (--force overwrites the files you changed)" if not force else ""
        _say(f"nothing undone: no file can be restored{forced}")
        return EXIT_NOTHING
    if not yes and not _confirmed():
        return EXIT_NOTHING
    result = apply(session, undo_plan)
    for line in result.done:
        print(visible(line))
    for line in result.failed:
        _say(visible(line))
    if result.failed:
        _say(f"prompt {undo_plan.target.number} is not fully undone")
        return EXIT_NOTHING
    undone = f"undone: prompt {undo_plan.target.number} ({visible(undo_plan.target.title)})"
    if undo_plan.uncovered:
        uncovered = ", ".join(map(in_line, undo_plan.uncovered))
        undone += f", except what undo cannot cover: {visible(uncovered)}"
    print(undone)
    return EXIT_OK


def _list(session: Session) -> int:
    checkpoints = prompt_checkpoints(session)
    for checkpoint in checkpoints:
        print(checkpoint_row(checkpoint))
    if checkpoints:
        print(f"{CHANGED_MARK}: the prompt changed files")
    else:
        _say(f"session {session.id[:8]} has no checkpoints")
    return EXIT_OK


def _confirmed() -> bool:
    if not sys.stdin.isatty():
        _say("not undone: no terminal to ask (--yes undoes without asking)")
        return False
    try:
        answer = input("Undo this? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        return True
    _say("not undone")
    return False


def _session(session_id: str | None, *, write: bool) -> Session | None:
    """The session to undo in (held: `write`, so no run appends to it meanwhile) or list."""
    store = SessionStore(di_code_home())
    cwd = Path.cwd().resolve()
    try:
        if session_id:
            return store.find(session_id, cwd, write=write)
        return store.latest(cwd, write=write)
    except SessionError as exc:
        raise ConfigError(str(exc)) from exc


def _say(text: str) -> None:
    print(f"di-code: {visible(text)}", file=sys.stderr)
