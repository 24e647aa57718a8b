"""The one base of di-code's own errors, in the lowest layer so that every layer can raise one.

Each error says in its message what went wrong, in one line a user can act on. `exit_code`
says whether it is the user's to fix: the command line's one place for errors
(di_code.cli.guarded.guarded) prints such an error as `di-code: MESSAGE` and exits with its
code; any other error that reaches it is a bug, said as an internal error (exit 1).
"""

from __future__ import annotations

from typing import ClassVar


class DiCodeError(Exception):
    """An error di-code raises on purpose (not a bug)."""

    exit_code: ClassVar[int | None] = None
    """The exit code when this error ends a command: set where the user must fix something
    (a configuration, the command line, a task file); None where di-code handles the error
    itself before it could end a command."""
