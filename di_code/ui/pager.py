"""Output taller than the screen goes through the user's pager."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from rich.console import Console, RenderableType


def page(text: str) -> None:
    """Show ANSI text in $PAGER (less -R by default), or print it when there is none."""
    import os
    import shlex
    import shutil
    import subprocess
    import sys

    command = shlex.split(os.environ.get("PAGER") or "less -R")
    if not command or shutil.which(command[0]) is None:
        sys.stdout.write(text)
        return
    env = {**os.environ, "LESS": os.environ.get("LESS", "-R")}
    subprocess.run(command, input=text.encode(), env=env, check=False)


def show_paged(console: Console, shown: RenderableType, app: Application[Any] | None) -> None:
    """Print `shown`, or page it when it is taller than the screen (the pager runs with the
    running prompt suspended)."""
    running = app is not None and app.is_running
    rows = app.output.get_size().rows if app is not None and running else console.height
    with console.capture() as captured:
        console.print(shown)
    text = captured.get()
    if text.count("\n") < rows - 2 or not running:
        console.print(shown)
        return
    from prompt_toolkit.application import run_in_terminal

    run_in_terminal(lambda: page(text))
