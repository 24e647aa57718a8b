"""The console-script entry point `main()`.

Typer (di_code.cli.typer_app) parses every command line; `di-code --version` alone is answered
before it is imported, since Typer costs about as much as starting Python.
"""

from __future__ import annotations

import atexit
import os
import sys

from di_code.cli import version_line
from di_code.system.stop_signals import install as install_stop_signals


def main() -> None:
    install_stop_signals()  # first: a signal during start-up ends the process cleanly too
    if sys.argv[1:] == ["--version"]:
        print(version_line())
        return
    last = SkipTeardown()
    atexit.register(last)  # registered first, so it runs after every other exit handler
    from di_code.cli.typer_app import run_app

    try:
        code = run_app()
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            last.code = done.code or 0
        raise
    last.code = code
    sys.exit(code)


class SkipTeardown:
    """The last exit handler: once the others have run and the output is flushed, end the
    process without the interpreter's teardown (freeing every module and object: CPU
    spent after the answer is out). Python has already waited for every non-daemon thread by
    then. Without a `code` (an uncaught error) or with output that cannot be written, it does
    nothing: the ordinary exit reports them as it always did."""

    def __init__(self) -> None:
        self.code: int | None = None

    def __call__(self) -> None:
        if self.code is None:
            return
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:
            return
        os._exit(self.code)
