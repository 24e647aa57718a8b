"""The console-script entry point `main()`.

`di-code --version` and the `--help` pages are answered before any CLI framework is imported:
Typer alone costs about as much as starting Python. Everything else goes to the Typer app in
`di_code.cli.commands`.
"""

from __future__ import annotations

import os
import sys

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
    from di_code.cli.commands import app

    app()


def version_line() -> str:
    return f"di-code {__version__}"


def help_page(args: list[str]) -> str | None:
    """The page Typer would print for `args`, or None when only Typer can say: another
    command line, a terminal narrower than the pages were made for, shell completion."""
    if not args or args[-1] != "--help" or "_DI_CODE_COMPLETE" in os.environ:
        return None
    import shutil

    from di_code.cli.help_pages import MIN_COLUMNS, PAGES

    if shutil.get_terminal_size().columns < MIN_COLUMNS:
        return None
    return PAGES.get(tuple(args[:-1]))
