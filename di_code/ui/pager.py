"""Output taller than the screen goes through the user's pager ($PAGER, less -R by default)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from typing import TYPE_CHECKING, Any, TextIO

from di_code.ai.redaction import redact_bytes
from di_code.system.children import run_child
from di_code.tools.process.program_env import KEY_VARIABLES, program_env

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from rich.console import Console, RenderableType


def page(text: str, out: TextIO | None = None) -> None:
    """Show ANSI text in $PAGER on `out` (stdout by default; `run` pages on stderr, its
    stdout may be a file), or write it there when there is no pager."""
    stream = sys.stdout if out is None else out
    command = shlex.split(os.environ.get("PAGER") or "less -R")
    if not command or shutil.which(command[0]) is None:
        stream.write(text)
        stream.flush()
        return
    env = program_env(KEY_VARIABLES, LESS=os.environ.get("LESS", "-R"))
    stream.flush()
    # the terminal's own group: the pager reads the keys
    data = redact_bytes(text.encode())  # the pager writes to the terminal itself, not via stdout
    run_child(command, own_group=False, input=data, env=env, check=False, stdout=stream)


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
