"""A chat starts the language servers its workspace needs as it opens, in the background
(issue 44.4: the first edit in a Python project waited seconds for a cold server): the prompt
is there at once, the server starts before any prompt; a preset that waits for trust in an
untrusted project still waits; plan mode starts none until its plan is approved."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
import pytest

from tests.support.chat import DI_CODE, spawn_chat
from tests.support.llm_server import LLMServer
from tests.support.lsp import FIXTURE, configure, server_pids
from tests.support.lsp import project as project
from tests.support.processes import wait_until
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def wait_for_start(project: Path) -> None:
    wait_until(lambda: bool(server_pids(project)), "the language server to start")


def test_a_chat_starts_its_servers_before_any_prompt_and_a_waiting_one_waits(
    llm_server: LLMServer, project: Path
) -> None:
    env = configure(Path(os.environ["DI_CODE_HOME"]), project)
    child = spawn_chat(llm_server, project, env=env)
    screen = Screen(child)
    try:
        screen.wait_for("›")
        wait_for_start(project)
        child.sendline("/lsp")
        screen.wait_for("not started", after="gopls: ")  # untrusted: it waits, unasked
    finally:
        child.close(force=True)
    assert llm_server.requests == []  # no prompt was needed


def test_plan_mode_starts_no_server_until_the_mode_changes(
    llm_server: LLMServer, project: Path
) -> None:
    env = configure(Path(os.environ["DI_CODE_HOME"]), project)
    child = spawn_chat(llm_server, project, "--permission-mode", "plan", env=env)
    screen = Screen(child)
    try:
        screen.wait_for("mode: plan ·")
        child.sendline("/lsp")
        screen.wait_for("not started", after="fixture: ")
        child.send("\x1b[Z")  # Shift+Tab: out of plan mode
        screen.wait_for("mode: auto ·")
        wait_for_start(project)
    finally:
        child.close(force=True)


def test_quitting_while_a_server_is_still_starting_ends_it(
    llm_server: LLMServer, project: Path
) -> None:
    home = Path(os.environ["DI_CODE_HOME"])
    (home / "config.toml").write_text(
        f'[lsp.fixture]\ncommand = ["{sys.executable}", "{FIXTURE}", "silent", "{project}"]\n'
        'extensions = [".txt"]\nstartup_timeout = 60\n'
    )
    child = spawn_chat(llm_server, project, env={"DI_CODE_LSP": "on", "PATH": "/usr/bin:/bin"})
    screen = Screen(child)
    try:
        screen.wait_for("›")
        wait_for_start(project)  # it never answers initialize: still starting
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
        wait_until(lambda: not server_pids(project), "the starting server to end with chat")
    finally:
        child.close(force=True)
