"""Figure 14's pty driver (scripts/bench/tui.py): it answers a TUI's start-up query as a
terminal does, sees the prompt on the screen, types "hi" and Enter, and times the request at
the loopback server; a TUI that never shows its prompt fails with its screen. Run against
`di-code chat` itself and against a small TUI that waits for the cursor-position answer."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from scripts.bench.agents import base_env
from scripts.bench.loopback import LoopbackServer
from scripts.bench.measure import ChildFailed
from scripts.bench.tui import drive, shows
from scripts.bench.wire import MODEL, ScriptedModel

DI_CODE = Path(sys.executable).parent / "di-code"
ASKING_TUI = """
import os, sys, termios, tty, urllib.request
tty.setraw(0)
os.write(1, b"\\x1b[6n")
answer = b""
while not answer.endswith(b"R"):
    answer += os.read(0, 1)
os.write(1, b"ready> ")
line = b""
while not line.endswith(b"\\r"):
    line += os.read(0, 1)
request = urllib.request.Request(sys.argv[1], data=line, method="POST")
urllib.request.urlopen(request, timeout=10).read()
"""


def test_di_code_chat_is_driven_to_its_first_request(tmp_path: Path) -> None:
    with LoopbackServer(ScriptedModel("chat")) as server:
        env = base_env(tmp_path) | {
            "OPENAI_API_KEY": "bench-key",
            "OPENAI_BASE_URL": f"{server.origin}/v1",
            "TERM": "xterm-256color",
        }
        argv = [DI_CODE, "chat", "--model", f"openai/{MODEL}", "--no-session"]
        times = drive(argv, env, tmp_path, shows("›"), server)
        assert server.arrivals[0].path == "/v1/chat/completions"
    assert 0 < times.prompt_s < times.request_s


def test_a_tui_that_asks_the_terminal_first_gets_an_answer(tmp_path: Path) -> None:
    with LoopbackServer(ScriptedModel("chat")) as server:
        argv = [sys.executable, "-c", ASKING_TUI, f"{server.origin}/v1/chat/completions"]
        times = drive(argv, dict(os.environ), tmp_path, shows("ready>"), server)
        assert len(server.arrivals) == 1
    assert times.prompt_s < times.request_s


def test_a_tui_without_its_prompt_fails_with_its_screen(tmp_path: Path) -> None:
    script = "import sys, time; print('no prompt here'); sys.stdout.flush(); time.sleep(60)"
    with LoopbackServer(ScriptedModel("chat")) as server, pytest.raises(ChildFailed) as failed:
        argv = [sys.executable, "-c", script]
        drive(argv, dict(os.environ), tmp_path, shows("›"), server, timeout=2)
    assert "no prompt here" in str(failed.value)
