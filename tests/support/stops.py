"""Tools, MCP servers and `di-code run` launches that ignore, block or outlive a stop, for the
tests that every stop ends everything it started."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pexpect
import pytest
from ptyprocess import PtyProcess

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer
from tests.support.mcp_config import ROOT, toml_table
from tests.support.processes import (
    MARK,
    SAFETY_TIMEOUT,
    alive,
    command_line,
    marked,
    wait_until,
)
from tests.support.session_files import saved_stop_reasons

EXIT_BOUND = 15.0
"""Seconds: a hang is what is caught, not a slow exit."""

BOUND = 5.0
"""Seconds from the signal to the exit: the README's second, with room for a loaded machine."""

DEAF_SHELL = "trap '' TERM HUP INT; touch {folder}/{name}; while :; do sleep 0.2; done"
"""A shell that ignores every stop signal (its sleeps inherit that) and says it started."""

LEFT_WITHIN = 5.0
"""Seconds from di-code's end until every process it killed is gone (a loaded machine)."""


CODES = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


EACH_SIGNAL = pytest.mark.parametrize("number", list(CODES), ids=["INT", "TERM", "HUP"])


PLUGIN = """
import asyncio, os, threading, time
from pathlib import Path

class _Tool:
    description = "for the stop tests"
    parameters = {"type": "object"}

    def started(self):  # named by the thread it runs on (whole: renamed into place)
        marker = Path(os.environ["STOP_TEST_DIR"], self.name)
        marker.with_suffix(".new").write_text(str(threading.get_native_id()))
        marker.with_suffix(".new").rename(marker)

class Block(_Tool):
    name = "block"

    async def execute(self, tool_call_id, params, signal=None):
        self.started()
        time.sleep(1000)  # a plugin's bug: it blocks the event loop
        return []

class Deaf(_Tool):
    name = "deaf"

    async def execute(self, tool_call_id, params, signal=None):
        self.started()
        await asyncio.sleep(1000)  # it never listens to the abort
        return []

class Stubborn(_Tool):
    name = "stubborn"

    async def execute(self, tool_call_id, params, signal=None):
        self.started()
        while True:  # a cancellation is swallowed too
            try:
                await asyncio.sleep(1000)
            except asyncio.CancelledError:
                pass

class Waiting(_Tool):
    name = "waiting"

    async def execute(self, tool_call_id, params, signal=None):
        self.started()
        await asyncio.Event().wait()  # an event nobody sets
        return []

class Sleeper(_Tool):
    name = "sleeper"

    def execute(self, tool_call_id, params, signal=None):  # run in a thread
        self.started()
        while True:
            time.sleep(1000)

class Busy(_Tool):
    name = "busy"

    def execute(self, tool_call_id, params, signal=None):  # run in a thread, CPU-bound
        self.started()
        n = 0
        while True:
            n += 1

class Masking(_Tool):
    name = "masking"

    async def execute(self, tool_call_id, params, signal=None):
        import signal as signals
        stops = {signals.SIGINT, signals.SIGTERM, signals.SIGHUP}
        signals.pthread_sigmask(signals.SIG_BLOCK, stops)  # the main thread's: the kernel
        self.started()  # hands a stop signal to another thread from now on
        await asyncio.Event().wait()


class Keeper(_Tool):
    name = "keeper"

    async def execute(self, tool_call_id, params, signal=None):
        threading.Thread(target=time.sleep, args=(1000,)).start()  # Python joins it at exit
        self.started()
        await asyncio.Event().wait()
"""


ABANDONED_TOOLS = ["deaf", "stubborn", "waiting", "sleeper", "busy", "keeper"]
PLUGIN_TOOLS = ["block", *ABANDONED_TOOLS, "masking"]


def plugin_site(
    folder: Path, source: str = PLUGIN, names: list[str] | None = None, site: str = "site"
) -> Path:
    """A folder for PYTHONPATH where a plugin module (PLUGIN, or `source` with the tool classes
    `names` title-cased) is installed as pip leaves a distribution."""
    where = folder / site
    (where / "stop_plugin-1.0.dist-info").mkdir(parents=True)
    (where / "stop_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[di_code.tools]\n"
        + "".join(
            f"{name} = stop_plugin:{name.title()}\n"
            for name in (names if names is not None else PLUGIN_TOOLS)
        )
    )
    (where / "stop_plugin.py").write_text(source)
    return where


class Launch:
    """`di-code run --yes --sandbox off PROMPT` with the marker; its processes ended after."""

    def __init__(self, home: Path, server: LLMServer, folder: Path) -> None:
        self.home, self.server, self.folder = home, server, folder
        self.mark = uuid.uuid4().hex
        self.process: subprocess.Popen[str] | None = None
        self.pty: PtyProcess | None = None
        site = plugin_site(folder)
        self.env = cli_env(
            home, server, **{MARK: self.mark, "PYTHONPATH": str(site), "STOP_TEST_DIR": str(folder)}
        )
        self.argv = [DI_CODE, "run", "--yes", "--sandbox", "off", "go"]

    def start(self, stdout: int | IO[Any] = subprocess.PIPE) -> subprocess.Popen[str]:
        """Started, its output to a pipe of the test's (or to `stdout`)."""
        self.process = subprocess.Popen(
            self.argv,
            cwd=self.folder,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
        )
        return self.process

    def continued(self, prompt: str) -> subprocess.CompletedProcess[str]:
        """`di-code run ... -c PROMPT` (the launch's options), to its end."""
        return subprocess.run(
            [*self.argv[:-1], "-c", prompt],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def start_in_terminal(self) -> PtyProcess:
        self.pty = PtyProcess.spawn(self.argv, cwd=str(self.folder), env=self.env)
        return self.pty

    def wait_for(self, name: str) -> None:
        wait_until(lambda: (self.folder / name).exists(), f"{name} to start")

    def stop(
        self, *numbers: signal.Signals, between: float = 0.0, thread: int | None = None
    ) -> tuple[int, float, str]:
        """Send the signals (to one `thread` of di-code's, if given); the exit code, the seconds
        until the exit, stderr."""
        assert self.process is not None
        started = time.monotonic()
        for number in numbers:
            if thread is None:
                self.process.send_signal(number)
            else:
                to_thread(self.process.pid, thread, number)
            time.sleep(between)
        code, ended_at, stderr = self.ended(f"{[number.name for number in numbers]}")
        return code, ended_at - started, stderr

    def ended(self, after: str, bound: float = SAFETY_TIMEOUT) -> tuple[int, float, str]:
        """The exit code, when the process ended (time.monotonic) and its stderr; it fails if
        the process still runs `bound` seconds on. The process is waited on, not its pipes (a
        process it left behind would hold them open): once it has ended, nothing it started
        may be left (`assert_nothing_left`), and the pipes are read."""
        process = self.process
        assert process is not None
        stderr: list[str] = []
        reading = threading.Thread(target=lambda: stderr.append(process.communicate()[1]))
        reading.daemon = True
        reading.start()  # the pipes are drained meanwhile: a full one would hold the process
        try:
            process.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            pytest.fail(f"di-code still runs {bound:.0f} s after {after}", False)
        ended_at = time.monotonic()
        self.assert_nothing_left()
        reading.join(SAFETY_TIMEOUT)
        assert stderr, "di-code's pipes stayed open after it and all it started ended"
        return process.returncode, ended_at, stderr[0]

    def assert_nothing_left(self) -> None:
        """No process carrying the mark runs LEFT_WITHIN seconds from now (call it once
        di-code has ended: what it killed is gone by then); those that do are named."""
        deadline = time.monotonic() + LEFT_WITHIN
        while left := marked(self.mark):
            if time.monotonic() > deadline:
                named = "\n".join(command_line(pid) for pid in left)
                pytest.fail(f"left running after di-code ended:\n{named}", False)
            time.sleep(0.02)

    def end(self) -> None:
        for process in [self.process, self.pty]:
            if process is not None and process.pid and alive(process.pid):
                os.kill(process.pid, signal.SIGKILL)
        for pid in marked(self.mark):
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                os.kill(pid, signal.SIGKILL)


def to_thread(pid: int, thread: int, number: signal.Signals) -> None:
    """Signal `number` to one thread of process `pid` (tgkill(2)): where the kernel puts a
    process's signal while its main thread blocks signals (glibc's pthread_create does so
    while it makes a thread, Python's subprocess while it uses vfork)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.tgkill(pid, thread, number) != 0:
        raise OSError(ctypes.get_errno(), f"tgkill {pid} {thread}")


@pytest.fixture
def launch(di_code_home: Path, llm_server: LLMServer, tmp_path: Path) -> Iterator[Launch]:
    made = Launch(di_code_home, llm_server, tmp_path)
    try:
        yield made
    finally:
        made.end()


def slow_mcp_server(
    launch: Launch, home: Path, init_delay: int = 1000, helper: bool = False, deaf: bool = False
) -> None:
    """An MCP server (the SDK's) that reads `initialize` and does not answer it for long (or
    for `init_delay` seconds), with a helper process in a session of its own if asked, both
    ignoring TERM, HUP and INT if `deaf`."""
    env = {
        "MCP_FIXTURE_DIR": str(launch.folder),
        "MCP_FIXTURE_NAME": "slow",
        "MCP_FIXTURE_INIT_DELAY": str(init_delay),
        "MCP_FIXTURE_HELPER": "1" if helper else "0",
        MARK: launch.mark,
    }
    argv = [sys.executable, "-m", "tests.support.mcp_fixture_server", "stdio"]
    if deaf:
        argv = ["sh", "-c", 'trap "" TERM HUP INT; exec "$0" "$@"', *argv]
    server = {
        "command": argv[0],
        "args": argv[1:],
        "cwd": str(ROOT),
        "timeout": 600,
        "env": env,
    }
    (home / "config.toml").write_text(toml_table("slow", server))


def spawned(launch: Launch, *argv: str) -> pexpect.spawn:
    """di-code with `argv` in a pseudo-terminal, with the launch's environment."""
    child = pexpect.spawn(
        DI_CODE, list(argv), cwd=str(launch.folder), env=launch.env, encoding="utf-8"
    )
    child.timeout = SAFETY_TIMEOUT
    return child


def assert_quiet(stderr: str) -> None:
    """At most one line on stderr, never a traceback."""
    assert "Traceback" not in stderr, stderr
    assert len(stderr.strip().splitlines()) <= 1, stderr


def assert_ended(
    launch: Launch, number: signal.Signals, home: Path, *signals: signal.Signals
) -> None:
    """Send `number` (then `signals`, 0.2 s apart): its exit code within BOUND, quiet, nothing
    of the tree left, the session loads with the aborted answer last."""
    code, seconds, stderr = launch.stop(number, *signals, between=0.2)
    print(f"ended in {seconds:.2f} s")  # the measured time, for the report (-s)
    assert code == CODES[number], stderr
    assert seconds < BOUND
    assert_quiet(stderr)
    launch.assert_nothing_left()
    assert saved_stop_reasons(home)[-1] == "aborted"
