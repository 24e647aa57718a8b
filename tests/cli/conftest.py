"""Helpers for end-to-end tests that start `di-code` as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.llm_server import LLMServer

API_KEY = "sk-test-secret-4711"
DI_CODE = str(Path(sys.executable).parent / "di-code")

RunDiCode = Callable[..., subprocess.CompletedProcess[str]]
WriteHook = Callable[..., None]


def cli_env(home: Path, server: LLMServer | None, **extra: str) -> dict[str, str]:
    """A clean environment: fresh home, no discovery of this machine's servers."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.pop("DI_CODE_MODEL", None)
    env.update(DI_CODE_HOME=str(home), DI_CODE_DISCOVERY="", NO_COLOR="1")
    if server is not None:
        env.update(
            OPENAI_API_KEY=API_KEY,
            OPENAI_BASE_URL=server.openai_base_url,
            DI_CODE_MODEL="openai/test-model",
        )
    env.update(extra)
    return env


def started(
    home: Path, server: LLMServer, workspace: Path, *args: str, under: Sequence[str] = ()
) -> subprocess.Popen[str]:
    """`di-code ARGS` started in the workspace with `cli_env` (`under` a program such as
    strace), nothing on stdin, its output read as text: for a test that acts while it runs (a
    second process, a signal)."""
    return subprocess.Popen(
        [*under, DI_CODE, *args],
        cwd=workspace,
        env=cli_env(home, server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def run_di_code(di_code_home: Path, workspace: Path, llm_server: LLMServer) -> RunDiCode:
    """`run_di_code(*args, input=None, env_extra={}, server=True)`, in the workspace."""

    def run(
        *args: str,
        input: str | None = None,
        env_extra: dict[str, str] | None = None,
        server: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        env = cli_env(di_code_home, llm_server if server else None, **(env_extra or {}))
        return subprocess.run(
            [DI_CODE, *args],
            cwd=workspace,
            env=env,
            input=input if input is not None else "",
            capture_output=True,
            text=True,
            timeout=60,
        )

    return run


@pytest.fixture
def user_hook(di_code_home: Path, tmp_path: Path) -> WriteHook:
    """`user_hook(event, name, body, matcher="")`: the user's one hook (it replaces any), a bash
    script `name` holding `body`, kept in tmp_path and named in DI_CODE_HOME's config."""

    def write(event: str, name: str, body: str, matcher: str = "") -> None:
        script = tmp_path / name
        script.write_text(body)
        (di_code_home / "config.toml").write_text(
            f'[[hooks.{event}]]\nmatcher = "{matcher}"\n'
            f'hooks = [{{ type = "command", command = "bash {script}", timeout = 10 }}]\n'
        )

    return write


def request_text(body: Any) -> str:
    """A recorded request body as text, to look for what reached the model."""
    return json.dumps(body, ensure_ascii=False)
