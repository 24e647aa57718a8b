"""A terminal narrowed while a reply streams (tmux rewraps the rows already drawn): no line
of the reply is left behind by the live area and printed a second time. pyte does not rewrap
on resize, so the terminal here is a real tmux."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.llm_server import LLMServer, Turn
from tests.ui.test_chat_e2e import DI_CODE, TIMEOUT, spawn_env

pytestmark = [
    pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

PARAGRAPHS = [
    f"Paragraph {n} says something fairly long, so that sixty columns must wrap it in two."
    for n in range(1, 9)
]

Tmux = Callable[..., str]


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    socket = tmp_path / "tmux.sock"

    def run(*args: str) -> str:
        command = ["tmux", "-S", str(socket), "-f", "/dev/null", *args]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    yield run
    subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True)


def screen_text(tmux: Tmux) -> str:
    return tmux("capture-pane", "-p", "-S", "-200")


def wait_for(tmux: Tmux, found: Callable[[str], bool], what: str) -> str:
    deadline = time.monotonic() + TIMEOUT
    while not found(text := screen_text(tmux)):
        assert time.monotonic() < deadline, f"never saw {what}:\n{text}"
        time.sleep(0.05)
    return text


def test_narrowing_the_terminal_mid_reply_prints_no_line_twice(
    llm_server: LLMServer, tmp_path: Path, tmux: Tmux
) -> None:
    llm_server.script(Turn(text="\n\n".join(PARAGRAPHS), chunk_size=6, delay=0.03))
    workspace = tmp_path / "work"
    workspace.mkdir()
    env = spawn_env(llm_server)
    names = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "DI_CODE_HOME", "TERM", "PATH")
    assignments = " ".join(f"{name}={shlex.quote(env[name])}" for name in names if name in env)
    chat = f"env {assignments} {DI_CODE} chat --model openai/test-model"
    tmux("new-session", "-d", "-x", "100", "-y", "40", "-c", str(workspace), chat)
    wait_for(tmux, lambda text: "›" in text, "the prompt")
    tmux("send-keys", "go", "Enter")
    streaming = PARAGRAPHS[2][:70]  # a line of the live area longer than the new width
    wait_for(tmux, lambda text: streaming in text, "the reply streaming")
    tmux("resize-window", "-x", "60", "-y", "40")
    text = wait_for(tmux, lambda text: "ctx " in text, "the end of the reply")
    counts = {n: text.count(f"Paragraph {n} says") for n in range(1, 9)}
    assert counts == dict.fromkeys(range(1, 9), 1), text
