"""Real git repositories, task files and `di-code batch` as a real subprocess."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.git import git
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

RunBatch = Callable[..., subprocess.CompletedProcess[str]]


def make_repo(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    git(folder, "init", "--quiet", "-b", "main")
    for name, text in files.items():
        (folder / name).write_text(text)
    git(folder, "add", "-A")
    git(folder, "commit", "--quiet", "-m", "first")
    return folder


def write_tasks(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return path


def read_results(path: Path) -> dict[str, dict[str, Any]]:
    return {record["id"]: record for record in map(json.loads, path.read_text().splitlines())}


def write_call(path: str, content: str, call_id: str) -> Turn:
    arguments = {"path": path, "content": content}
    return Turn(tool_calls=(ToolCallSpec("write", arguments, call_id),))


def bash_call(command: str, call_id: str = "b1") -> Turn:
    return Turn(tool_calls=(ToolCallSpec("bash", {"command": command}, call_id),))


@pytest.fixture
def run_batch(di_code_home: Path, tmp_path: Path, llm_server: LLMServer) -> RunBatch:
    """`run_batch(*args)`: `di-code batch ...` in tmp_path against the loopback model."""

    def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [DI_CODE, "batch", *args],
            cwd=tmp_path,
            env=cli_env(di_code_home, llm_server),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run
