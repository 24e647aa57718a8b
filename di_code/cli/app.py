"""The console-script entry point `main()`.

`di-code --version`, the `--help` pages and the plain command lines of `run` and `chat` are
answered before any CLI framework is imported (Typer alone costs about as much as starting
Python), from what was saved from the Typer app (saved_app.py). Everything else goes to the
Typer app in `di_code.cli.commands`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import NoReturn

from di_code import __version__


def main() -> None:
    args = sys.argv[1:]
    if args == ["--version"]:
        print(version_line())
        return
    page = help_page(args)
    if page is not None:
        sys.stdout.write(page)
        return
    # httpx's __init__ imports its own command line (click, pygments, rich.progress: ~0.1 s)
    # whenever click is installed; di-code never runs it. A None entry makes that import fail
    # at once, and httpx falls back to a stub `main`.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    from di_code.cli.dataclass_code import install

    install()  # before the modules that make dataclasses: ~40 ms less at every start
    from di_code.cli import collector
    from di_code.cli.quick_parse import quick_command

    quick = quick_command(args)
    if quick is not None:
        collector.pause()  # until its set-up is done: cli.setup.prepare resumes it
    command = quick or typer_app()
    try:
        code = command()
    except SystemExit as done:
        if done.code is not None and not isinstance(done.code, int):
            raise
        code = done.code
    exit_without_teardown(code or 0)


def typer_app() -> Callable[[], int | None]:
    from di_code.cli.commands import app

    return app


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


def version_line() -> str:
    return f"di-code {__version__}"


def help_page(args: list[str]) -> str | None:
    """The page Typer would print for `args`, or None when only Typer can say: another
    command line, a terminal narrower than the pages were made for, shell completion."""
    if not args or args[-1] != "--help" or "_DI_CODE_COMPLETE" in os.environ:
        return None
    import shutil

    from di_code.cli.saved_app import MIN_COLUMNS, PAGES, SOURCES_CRC

    if shutil.get_terminal_size().columns < MIN_COLUMNS or app_sources_crc() != SOURCES_CRC:
        return None
    return PAGES.get(tuple(args[:-1]))


APP_SOURCES = ("commands.py", "options.py")
"""The files the commands, options and help are written in: pages and grammars saved from
other versions of them are stale (a merge that changed an option, say): Typer answers."""


def app_sources_crc() -> int | None:
    import zlib

    crc = 0
    for name in APP_SOURCES:
        try:
            with open(os.path.join(os.path.dirname(__file__), name), "rb") as source:
                crc = zlib.crc32(source.read(), crc)
        except OSError:
            return None
    return crc
