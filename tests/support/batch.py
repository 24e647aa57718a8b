"""`di-code batch` started in the background (for the tests that stop it or watch it), and the
module name in the command line of each task's processes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer

CHILD = "di_code.cli.batch_child"
"""In the command line of a task's keeper and its `run`."""


def start_batch(
    home: Path, server: LLMServer, cwd: Path, *args: str, **env: str
) -> subprocess.Popen[str]:
    """`di-code batch ARGS` in `cwd`, with the test's environment and the variables `env`."""
    return subprocess.Popen(
        [DI_CODE, "batch", *args],
        cwd=cwd,
        env=cli_env(home, server, **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
