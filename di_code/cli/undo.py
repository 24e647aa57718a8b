"""`di-code undo`: take back what the newest prompt of this folder's newest session changed.

Exit codes: 0 restored (or listed); 1 nothing to undo, or refused because the user changed a
file after the agent did (`--force` overwrites); 2 a bad session id.
"""

from __future__ import annotations

import sys
from pathlib import Path

from di_code.config.settings import ConfigError, di_code_home
from di_code.session import Session, SessionError, SessionStore
from di_code.session.checkpoints import NothingToUndo, prompt_checkpoints, undo
from di_code.ui.commands import checkpoint_row
from di_code.ui.safe_text import visible

EXIT_OK, EXIT_NOTHING = 0, 1


def undo_command(session_id: str | None, list_only: bool, to: int | None, force: bool) -> int:
    session = _session(session_id)
    if session is None:
        _say("no session in this folder to undo")
        return EXIT_NOTHING
    if list_only:
        checkpoints = prompt_checkpoints(session)
        for checkpoint in checkpoints:
            print(checkpoint_row(checkpoint))
        if not checkpoints:
            _say(f"session {session.id[:8]} has no checkpoints")
        return EXIT_OK
    try:
        report = undo(session, to=to, force=force)
    except NothingToUndo as exc:
        _say(str(exc))
        return EXIT_NOTHING
    if not report.applied:
        _say("not undone: these files changed after the agent changed them (--force overwrites):")
        for path in report.conflicts:
            print(f"  {visible(path)}", file=sys.stderr)
        return EXIT_NOTHING
    for line in report.lines() or ["the files already match the checkpoint"]:
        print(visible(line))
    print(f"undone: prompt {report.target.number} ({visible(report.target.title)})")
    return EXIT_OK


def _session(session_id: str | None) -> Session | None:
    store = SessionStore(di_code_home())
    cwd = Path.cwd().resolve()
    try:
        return store.find(session_id, cwd) if session_id else store.latest(cwd)
    except SessionError as exc:
        raise ConfigError(str(exc)) from exc


def _say(text: str) -> None:
    print(f"di-code: {visible(text)}", file=sys.stderr)
