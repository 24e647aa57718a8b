"""Showing text taller than the screen: in `$PAGER` (less -R by default)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from typing import TextIO


def page(text: str, out: TextIO | None = None) -> None:
    """Show ANSI text in $PAGER on `out` (stdout by default; `run` pages on stderr, its
    stdout may be a file), or write it there when there is no pager."""
    stream = sys.stdout if out is None else out
    command = shlex.split(os.environ.get("PAGER") or "less -R")
    if not command or shutil.which(command[0]) is None:
        stream.write(text)
        stream.flush()
        return
    env = {**os.environ, "LESS": os.environ.get("LESS", "-R")}
    stream.flush()
    subprocess.run(command, input=text.encode(), env=env, check=False, stdout=stream)
