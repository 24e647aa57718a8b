"""Issue 40 item 5 on the chat screen: the provider key, planted in a streamed answer, a tool
result, a command the user is asked about and an error, is drawn only as `***` (what the
terminal was sent, escape sequences taken out, and what it shows)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pexpect
import pytest

from tests.cli.conftest import API_KEY
from tests.support.approval import GUARD_WAIT
from tests.support.chat import DI_CODE, TIMEOUT, spawn_env
from tests.support.llm_server import HttpError, LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")

ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def test_the_chat_screen_shows_the_key_only_hidden(llm_server: LLMServer, tmp_path: Path) -> None:
    (tmp_path / "key.txt").write_text(f"the key: {API_KEY}\n")
    llm_server.script(
        Turn(
            text=f"planting {API_KEY} in the answer",
            tool_calls=(ToolCallSpec("read", {"path": "key.txt"}),),
        ),
        Turn(tool_calls=(ToolCallSpec("bash", {"command": f"echo {API_KEY} > out.txt"}),)),
        HttpError(400, f"Incorrect API key provided: {API_KEY}"),
    )
    env = {**spawn_env(llm_server), "OPENAI_API_KEY": API_KEY}
    child = pexpect.spawn(
        str(DI_CODE), ["chat", "--model", "openai/test-model"], cwd=str(tmp_path), env=env,
        dimensions=(30, 100), encoding="utf-8", timeout=TIMEOUT,
    )  # fmt: skip
    screen = Screen(child)
    try:
        screen.wait_for("›")
        child.sendline("go")
        screen.wait_for("[y]es")
        screen.wait_for("echo *** > out.txt")
        time.sleep(GUARD_WAIT)
        child.send("y")
        screen.wait_for("Incorrect API key provided: ***")
        assert "planting *** in the answer" in ESCAPES.sub("", screen.written)
    finally:
        child.close(force=True)
    assert (tmp_path / "out.txt").read_text() == f"{API_KEY}\n"  # the command ran as written
    drawn = ESCAPES.sub("", screen.written)
    assert API_KEY not in drawn and API_KEY not in screen.text
