"""The console-script entry point `main()`.

Typer (di_code.cli.commands) parses every command line; `di-code --version` alone is answered
before it is imported, since Typer costs about as much as starting Python.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

from di_code.cli import version_line


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        print(version_line())
        return
    from di_code.cli.commands import app

    try:
        code = app()
    except SystemExit as done:
        if done.code is not None and not isinstance(done.code, int):
            raise
        code = done.code
    exit_without_teardown(code or 0)


def exit_without_teardown(code: int) -> NoReturn:
    """Exit once the exit handlers have run and the output is flushed, without the
    interpreter's teardown (freeing every module and object: 50-180 ms of CPU after the
    answer is out). A thread still running, or output that cannot be written, takes the
    ordinary exit, which waits for that thread or reports the error as it always did."""
    import atexit
    import threading

    main_thread = threading.main_thread()
    if any(not t.daemon and t is not main_thread for t in threading.enumerate()):
        raise SystemExit(code)
    atexit._run_exitfuncs()  # e.g. stopping bash's background jobs; they run only once
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        raise SystemExit(code) from None
    os._exit(code)
