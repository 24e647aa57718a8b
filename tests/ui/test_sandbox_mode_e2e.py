"""The bash sandbox follows the permission mode in a real `di-code chat` (pty + pyte): a chat
started in ask mode and switched to auto with Shift+Tab runs commands unapproved, so they run
confined; switched back to ask, they run as approved. `--sandbox off` stays off and says so
once; without bubblewrap, auto says it runs unsandboxed, as the start-up does."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.support.approval import answer, last_request
from tests.support.bubblewrap import needs_bubblewrap
from tests.support.chat import DI_CODE, TIMEOUT, spawn_chat, spawn_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen

SHIFT_TAB = "\x1b[Z"
NO_BUBBLEWRAP_NOTE = "auto mode runs bash unsandboxed: bubblewrap is not installed"

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


@pytest.fixture
def outside() -> Iterator[Path]:
    """A writable folder outside the workspace and outside /tmp (the sandbox's is private)."""
    folder = Path(tempfile.mkdtemp(prefix="di-code-mode-test-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder)


def bash_then(command: str, text: str) -> tuple[Turn, Turn]:
    return Turn(tool_calls=(ToolCallSpec("bash", {"command": command}),)), Turn(text=text)


def bash_description(request_body: dict[str, Any]) -> str:
    """bash's description as the model was sent it (Chat Completions' tool list)."""
    [bash] = [t for t in request_body["tools"] if t["function"]["name"] == "bash"]
    description: str = bash["function"]["description"]
    return description


def switch_to(screen: Screen, mode: str) -> None:
    screen.child.send(SHIFT_TAB)
    screen.wait_for(f"mode: {mode} ·")


@needs_bubblewrap
def test_shift_tab_into_auto_confines_bash_and_back_to_ask_frees_it(
    llm_server: LLMServer, tmp_path: Path, outside: Path
) -> None:
    llm_server.script(
        *bash_then(f"echo one > {outside}/one.txt", "first done"),
        *bash_then(f"echo two > {outside}/two.txt", "second done"),
        *bash_then(f"echo three > {outside}/three.txt", "third done"),
    )
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        screen.wait_for("mode: ask ·")
        child.sendline("first")
        answer(screen, "y")
        screen.wait_for("first done")
        assert (outside / "one.txt").read_text() == "one\n"  # approved, unconfined

        switch_to(screen, "accept-edits")
        switch_to(screen, "plan")
        switch_to(screen, "auto")
        child.sendline("second")
        screen.wait_for("second done")
        assert not (outside / "two.txt").exists()  # unapproved, so confined
        assert "Read-only file system" in last_request(llm_server)
        # the model is told so: bash's description in the requests after the switch says it
        first, second = llm_server.requests[0].body, llm_server.requests[2].body
        assert "sandbox" not in bash_description(first)
        assert "Commands run in a sandbox" in bash_description(second)

        child.sendline("/permissions ask")
        screen.wait_for("Permission mode: ask")
        screen.wait_for("Bash runs unsandboxed")
        child.sendline("third")
        answer(screen, "y")
        screen.wait_for("third done")
        assert (outside / "three.txt").read_text() == "three\n"
    finally:
        child.close(force=True)


def test_sandbox_off_stays_off_in_auto_and_says_so_once(
    llm_server: LLMServer, tmp_path: Path, outside: Path
) -> None:
    llm_server.script(*bash_then(f"echo out > {outside}/out.txt", "done"))
    child = spawn_chat(llm_server, tmp_path, "--sandbox", "off")
    screen = Screen(child)
    try:
        screen.wait_for("mode: ask ·")
        for mode in ("accept-edits", "plan", "auto", "ask", "accept-edits", "plan", "auto"):
            switch_to(screen, mode)
        assert screen.text.count("auto mode runs bash unsandboxed") == 1
        assert "the sandbox is off (--sandbox off or [sandbox] mode)" in screen.text
        child.sendline("write it")
        screen.wait_for("done")
        assert (outside / "out.txt").read_text() == "out\n"
    finally:
        child.close(force=True)


def test_auto_without_bubblewrap_says_it_runs_unsandboxed(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    env = {**spawn_env(llm_server), "PATH": "/nonexistent"}
    child = pexpect.spawn(
        str(DI_CODE),
        ["chat", "--model", "openai/test-model"],
        cwd=str(tmp_path),
        env=env,
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    screen = Screen(child)
    try:
        screen.wait_for("mode: ask ·")
        assert "unsandboxed" not in screen.text
        switch_to(screen, "accept-edits")
        switch_to(screen, "plan")
        assert "unsandboxed" not in screen.text
        switch_to(screen, "auto")
        screen.wait_for(NO_BUBBLEWRAP_NOTE)
    finally:
        child.close(force=True)
