"""How a command's body ends: a user error is one line on stderr and its exit code (2 for
click's refusals), an unexpected error one line and exit 1, with the traceback only under
`--verbose`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType

from di_code.setup.flags import CliOptions


def guarded(body: Callable[[], int], options: CliOptions) -> int:
    """Run a command body; turn user errors into one line and exit 2, bugs into exit 1.

    The body imports what it needs itself: modules that keep `sys.stderr` as a default
    argument must see the redacting stream installed here."""
    from di_code.ai.redaction import redact_output  # not needed by `--help`

    redact_output()  # from here on, whatever leaves the process has the known secrets hidden
    try:
        return body()
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        code = _user_exit_code(exc)
        if code is not None:  # the user's to fix (DiCodeError.exit_code): its own line
            print(f"di-code: {_shown(exc)}", file=sys.stderr)
            return code
        if options.verbose:
            raise
        print(f"di-code: internal error: {_shown(exc)} (--verbose shows details)", file=sys.stderr)
        return 1


def _user_exit_code(error: Exception) -> int | None:
    """The exit code of an error that is the user's to fix: di-code's own
    (DiCodeError.exit_code) or click's refusal of the command line (2); None for a bug."""
    from di_code.system.errors import DiCodeError

    if isinstance(error, click_module().ClickException):
        return int(error.exit_code)
    return error.exit_code if isinstance(error, DiCodeError) else None


def _shown(error: Exception) -> str:
    """The message through the sanitizer: it may quote files, servers, the command line."""
    from di_code.system.safe_text import visible  # only on an error

    click = click_module()
    text = error.format_message() if isinstance(error, click.ClickException) else str(error)
    return visible(text)


def click_module() -> ModuleType:
    """The click Typer parses with: its own copy (typer 0.2x, `typer._click`: the plain install
    has no click) or click itself (older typer)."""
    import typer.core

    click: ModuleType = getattr(typer.core, "_click", None) or getattr(typer.core, "click")  # noqa: B009
    return click
