"""`di-code export [SESSION] --format html|md|json [-o FILE]`: a saved conversation as one
file, or on stdout. SESSION is named as `/resume` and `--session` name it (its number in the
`/resume` list, its id or an id prefix); without it, this folder's newest session.

Exit codes: 0 exported; 1 no session, a session file that cannot be read, or a file that
cannot be written (one line on stderr each); 2 a bad option; 130/143/129 stopped by a signal.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from di_code.config.provider_factory import register_known_keys
from di_code.config.settings import di_code_home, load_user_settings
from di_code.session import Session, SessionError, SessionStore
from di_code.session.session_lines import pick
from di_code.system.safe_text import visible
from di_code.system.stop_signals import Stopped, say, unwinding
from di_code.ui.export import ExportFormat, export_text, write_export

EXIT_OK, EXIT_FAILED = 0, 1


def export_command(choice: str | None, kind: ExportFormat, output: Path | None) -> int:
    """Ctrl-C (or SIGTERM, SIGHUP) unwinds the export: a file half written beside OUTPUT is
    removed, OUTPUT is left as it was."""
    try:
        with unwinding():
            return _export(choice, kind, output)
    except Stopped as stop:
        say(stop.exit_code - 128)
        return stop.exit_code


def _export(choice: str | None, kind: ExportFormat, output: Path | None) -> int:
    try:
        session = _session(choice)
    except SessionError as exc:
        return _fail(str(exc))
    if session is None:
        return _fail("no session in this folder to export")
    for warning in session.warnings:  # lines skipped while loading: the rest is exported
        _say(warning)
    text = export_text(session, kind)
    if output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        write_export(text, output)
    except OSError as exc:
        return _fail(f"cannot write {output}: {exc.strerror or exc}")
    _say(f"exported session {session.id[:8]} to {output}")
    return EXIT_OK


def _session(choice: str | None) -> Session | None:
    """Read, not held: exporting a session another process goes on with is fine. The keys
    the environment holds are hidden first, as in a chat."""
    home = di_code_home()
    register_known_keys(load_user_settings(home), os.environ)
    store = SessionStore(home)
    cwd = Path.cwd().resolve()
    if choice is None:
        return store.latest(cwd, write=False)
    return store.open(pick(store, choice, cwd), cwd, write=False)


def _fail(text: str) -> int:
    _say(text)
    return EXIT_FAILED


def _say(text: str) -> None:
    print(f"di-code: {visible(text)}", file=sys.stderr)
