"""`di-code ARGS` run to its end with the environment of the CLI tests, optionally under a file
size limit: RLIMIT_FSIZE in the di-code process makes a write past it fail with a real EFBIG
(a full disk, without root or a small filesystem)."""

from __future__ import annotations

import resource
import subprocess
from pathlib import Path

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer


def di_code(
    home: Path, server: LLMServer, workspace: Path, *args: str, file_limit: int | None = None
) -> subprocess.CompletedProcess[str]:
    """Run di-code in `workspace` with nothing on its standard input; its output as text."""

    def limited() -> None:
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    return subprocess.run(
        [DI_CODE, *args],
        cwd=workspace,
        env=cli_env(home, server),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limited,
    )
