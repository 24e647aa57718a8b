"""di-code chat in a real tmux (which rewraps the rows already drawn when a window narrows, as
pyte does not): the server, the fixture, and reading the screen."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.chat import DI_CODE, TIMEOUT, spawn_env
from tests.support.llm_server import LLMServer

NEEDS_TMUX = [
    pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
"""The marks of a test module driving chat in tmux."""

Tmux = Callable[..., str]


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    socket = tmp_path / "tmux.sock"

    def run(*args: str) -> str:
        command = ["tmux", "-S", str(socket), "-f", "/dev/null", *args]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    yield run
    subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True)


def screen_text(tmux: Tmux, *, history: bool = True) -> str:
    """The screen, and the history above it unless told."""
    return tmux("capture-pane", "-p", *(("-S", "-200") if history else ()))


def wait_for(tmux: Tmux, found: Callable[[str], bool], what: str, *, history: bool = True) -> str:
    deadline = time.monotonic() + TIMEOUT
    while not found(text := screen_text(tmux, history=history)):
        assert time.monotonic() < deadline, f"never saw {what}:\n{text}"
        time.sleep(0.05)
    return text


def chat_command(server: LLMServer) -> str:
    """`di-code chat` against the server, as a tmux window's command."""
    env = spawn_env(server)
    names = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "DI_CODE_HOME", "TERM", "PATH")
    assignments = " ".join(f"{name}={shlex.quote(env[name])}" for name in names if name in env)
    return f"env {assignments} {DI_CODE} chat --model openai/test-model --yes"
