"""`di-code chat` in a real pseudo-terminal against the loopback model server: spawning it,
waiting for its prompt, reading its screen through a terminal emulator (pyte), leaving it."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests.support.llm_server import LLMServer
from tests.support.processes import alive
from tests.support.screen import TIMEOUT, Screen

DI_CODE = Path(sys.executable).with_name("di-code")


def processes_with_argv(argv: list[str]) -> list[int]:
    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == wanted:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_until_running(argv: list[str]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not processes_with_argv(argv):
        assert time.monotonic() < deadline, f"{argv} never started"
        time.sleep(0.05)


def wait_until_gone(argv: list[str]) -> bool:
    deadline = time.monotonic() + TIMEOUT
    while processes_with_argv(argv):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def spawn_env(server: LLMServer) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        OPENAI_BASE_URL=server.openai_base_url,
        OPENAI_API_KEY="test-key",
        TERM="xterm-256color",
        PAGER="less",
    )
    return env


def spawn_chat(
    server: LLMServer,
    workspace: Path,
    *args: str,
    rows: int = 30,
    columns: int = 100,
    env: dict[str, str] | None = None,
) -> pexpect.spawn:
    return pexpect.spawn(
        str(DI_CODE),
        ["chat", "--model", "openai/test-model", *args],
        cwd=str(workspace),
        env=spawn_env(server) | (env or {}),
        dimensions=(rows, columns),
        encoding="utf-8",
        timeout=TIMEOUT,
    )


@contextlib.contextmanager
def chatting(server: LLMServer, workspace: Path, *args: str) -> Iterator[pexpect.spawn]:
    """A chat at its first prompt; a block that ends without an error leaves it by `/exit` and
    waits for it to end, and the chat is closed however the block ends."""
    child = spawn_chat(server, workspace, *args)
    try:
        child.expect("›")
        yield child
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def say(child: pexpect.spawn, line: str, *replies: str) -> None:
    """Type `line` and wait for each of `replies` in turn."""
    child.sendline(line)
    for reply in replies:
        child.expect(reply)


def open_chat(
    server: LLMServer, workspace: Path, *args: str, rows: int = 30, history: int = 0
) -> tuple[pexpect.spawn, Screen]:
    child = spawn_chat(server, workspace, *args, rows=rows)
    screen = Screen(child, rows, history=history)
    screen.wait_for("›")
    return child, screen


def quit_chat(child: pexpect.spawn) -> None:
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


needs_di_code = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def ended_within(child: pexpect.spawn, bound: float, after: str, screen: Screen | None) -> str:
    """Read the terminal (into `screen`, if any, else the text read is returned) until the
    process has ended; fail if it still runs `bound` seconds on. The process is waited on, not
    its terminal's end: a process it left behind may hold the terminal open for ever."""
    deadline = time.monotonic() + bound
    closed = False
    read: list[str] = []
    while alive(child.pid):
        if time.monotonic() > deadline:
            shown = f":\n{screen.text}" if screen is not None else ""
            pytest.fail(f"still running {bound:.0f} s after {after}{shown}", False)
        if closed:
            time.sleep(0.02)
            continue
        try:
            if screen is not None:
                screen.pump(0.1)
            else:
                read.append(child.read_nonblocking(65536, timeout=0.1))
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            closed = True
    return "".join(read)
