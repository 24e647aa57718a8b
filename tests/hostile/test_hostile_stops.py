"""Stopping, attacked from README alone: plugin tools, commands, hooks and MCP servers that
ignore their signal every way they can (TERM ignored, their own sessions, double forks, C calls
that hold the GIL, endless output), a second signal during shutdown, a real `| head -c 1` on
every output format, and chat's Esc and closed terminal on a deaf tool.

The rule under attack: Esc or Ctrl-C ends the turn at once; SIGTERM (or a second Ctrl-C) ends
di-code within a second, whatever runs, every child's tree with it. Each case checks the exit
code, a liveness bound (generous: the machine is shared), that no process carrying the test's
marker is left (/proc), that the session still loads, and that stderr has at most one line and
no traceback.
"""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from di_code.system.stop_signals import EXIT_WITHIN
from tests.cli.conftest import WriteHook
from tests.support.approval import QUESTION, untrusted_project
from tests.support.chat import ended_within
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.processes import SAFETY_TIMEOUT, wait_until
from tests.support.screen import Screen
from tests.support.session_files import saved_stop_reasons
from tests.support.stops import (
    BOUND,
    CODES,
    DEAF_SHELL,
    EACH_SIGNAL,
    Launch,
    assert_ended,
    assert_quiet,
    plugin_site,
    slow_mcp_server,
    spawned,
)

DEV_MODE = pytest.mark.parametrize("dev", [False, True], ids=["plain", "dev-mode"])
"""Each case also under Python's development mode (`-X dev`), which reports every resource
finalized late."""

PLUGIN = '''
import asyncio, os, re, subprocess, sys, time
from pathlib import Path

FOLDER = os.environ["STOP_TEST_DIR"]
DEAF = """DEAF_SHELL"""


def deaf(name, **popen):
    """A TERM-ignoring shell started by the tool itself, not through di-code."""
    return subprocess.Popen(
        ["sh", "-c", DEAF.format(folder=FOLDER, name=name)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **popen
    )


def wait_for(*names):
    while not all(Path(FOLDER, name).exists() for name in names):
        time.sleep(0.02)


def started(name):
    Path(FOLDER, name).write_text("started")


class _Tool:
    description = "for the hostile stop tests"
    parameters = {"type": "object"}


class Spawner(_Tool):
    """A plain def that starts deaf children every way: in di-code's group, in a session of
    its own, a double-forked setsid daemon, and a bare fork that setsids; then never returns."""
    name = "spawner"

    def execute(self, tool_call_id, params, signal=None):
        deaf("same-group")
        deaf("own-session", start_new_session=True)
        inner = DEAF.format(folder=FOLDER, name="daemon").replace("'", "'\\\\''")
        subprocess.run(["sh", "-c", f"setsid sh -c '{inner}' >/dev/null 2>&1 < /dev/null &"])
        pid = os.fork()
        if pid == 0:
            os.setsid()
            os.execvp("sh", ["sh", "-c", DEAF.format(folder=FOLDER, name="forked")])
        wait_for("same-group", "own-session", "daemon", "forked")
        started(self.name)
        while True:
            time.sleep(1000)


class Swallower(_Tool):
    """An async def with a deaf child that swallows every cancellation in a loop."""
    name = "swallower"

    async def execute(self, tool_call_id, params, signal=None):
        deaf("child")
        wait_for("child")
        started(self.name)
        while True:
            try:
                await asyncio.sleep(1000)
            except asyncio.CancelledError:
                pass


class Regex(_Tool):
    """A plain def that holds the GIL in C, a quarter second at a time, for ever."""
    name = "regex"

    def execute(self, tool_call_id, params, signal=None):
        started(self.name)
        while True:
            re.match(r"(a+)+$", "a" * 21 + "b")


class Hog(_Tool):
    """A plain def in one C call that holds the GIL for minutes."""
    name = "hog"

    def execute(self, tool_call_id, params, signal=None):
        started(self.name)
        re.match(r"(a+)+$", "a" * 34 + "b")
        return []


class Switcher(_Tool):
    """A plain def that computes in Python for ever, having let the thread that holds the GIL
    keep it 50 ms before one that waits may take it (Python's default is 5 ms)."""
    name = "switcher"

    def execute(self, tool_call_id, params, signal=None):
        sys.setswitchinterval(0.05)
        started(self.name)
        n = 0
        while True:
            n += 1


class Keeper(_Tool):
    """An async def that starts a non-daemon thread (Python joins it at exit) and never ends."""
    name = "keeper"

    async def execute(self, tool_call_id, params, signal=None):
        import threading
        threading.Thread(target=time.sleep, args=(1000,)).start()
        started(self.name)
        await asyncio.Event().wait()
'''.replace("DEAF_SHELL", DEAF_SHELL)

TOOLS = ["spawner", "swallower", "regex", "switcher", "hog", "keeper"]


def hostile(launch: Launch) -> Launch:
    """The launch with this file's plugin instead of the stop tests' one."""
    site = plugin_site(launch.folder, PLUGIN, TOOLS, site="hostile-site")
    launch.env["PYTHONPATH"] = str(site)
    return launch


def tool_running(launch: Launch, server: LLMServer, tool: str) -> None:
    """`di-code run` with this file's plugin, its model calling `tool`: returns once it runs."""
    hostile(launch)
    server.script(call(tool, {}), Turn(text="never asked"))
    launch.start()
    launch.wait_for(tool)


@contextlib.contextmanager
def deaf_tool_in_chat(launch: Launch, server: LLMServer, then: str) -> Iterator[pexpect.spawn]:
    """`chat --yes` whose model calls `spawner` (and answers `then` next), yielded once the
    tool and its deaf children run; ended after, if the test did not end it."""
    hostile(launch)
    server.script(call("spawner", {}), Turn(text=then))
    child = spawned(launch, "chat", "--yes", "--sandbox", "off")
    try:
        child.expect("›")
        child.sendline("go")
        launch.wait_for("spawner")
        yield child
    finally:
        if child.isalive():
            child.close(force=True)


def into_head(launch: Launch, fmt: str) -> subprocess.Popen[bytes]:
    """`di-code run --output-format FMT … | head -c 1` started; the reader, head, returned
    (only di-code holds the pipe's writing end)."""
    launch.argv[2:2] = ["--output-format", fmt]
    reader = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert reader.stdin is not None
    launch.start(stdout=reader.stdin)
    reader.stdin.close()
    return reader


SLOW_STEP = re.compile(r"Executing <.*> took \d+\.\d+ seconds\n")
"""What asyncio's debug mode (on in Python's development mode) says of a step of the event loop
that took more than 0.1 s: a measure of the machine's load, not a fault."""


def collect_at_exit(launch: Launch) -> None:
    """di-code collects its garbage once its event loop has closed, before the exit stops its
    children, as any collection could then (the ones Python makes by itself come when they
    come): what the loop's end left open is finalized there."""
    (launch.folder / "site" / "sitecustomize.py").write_text(
        "import gc, threading\nthreading._register_atexit(gc.collect)\n"
    )


def without_slow_steps(stderr: str) -> str:
    return SLOW_STEP.sub("", stderr)


@EACH_SIGNAL
def test_a_tool_whose_own_children_ignore_term_and_leave_its_session_takes_them_along(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, number: signal.Signals
) -> None:
    """Children the tool started itself (not through di-code), each deaf to TERM: in
    di-code's group, setsid'd, double-forked, forked by hand; none is left."""
    tool_running(launch, llm_server, "spawner")
    assert_ended(launch, number, di_code_home)


def test_an_async_tool_swallowing_cancellation_with_a_deaf_child_ends_with_sigterm(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    tool_running(launch, llm_server, "swallower")
    assert_ended(launch, signal.SIGTERM, di_code_home)


def test_a_tool_holding_the_gil_in_c_again_and_again_ends_with_sigterm(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    tool_running(launch, llm_server, "regex")
    assert_ended(launch, signal.SIGTERM, di_code_home)


def test_a_tool_computing_in_python_does_not_hold_the_clean_stop_to_the_watchdog(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    """Each of the clean stop's system calls (a /proc walk: hundreds) lets the computing thread
    take the GIL, and keep it for the switch interval: at 50 ms the stop would last until the
    watchdog ends it, EXIT_WITHIN after the signal. Once a stop begins, di-code's threads take
    the GIL back at once (stop_signals.SWITCH_WHILE_STOPPING), and the clean stop ends it."""
    tool_running(launch, llm_server, "switcher")
    code, seconds, stderr = launch.stop(signal.SIGTERM)
    print(f"ended in {seconds:.2f} s")
    assert code == CODES[signal.SIGTERM], stderr
    assert seconds < EXIT_WITHIN
    assert_quiet(stderr)
    launch.assert_nothing_left()


def test_a_tool_holding_the_gil_in_one_long_c_call_is_ended_by_sigkill_with_nothing_lost(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    """README (Tools in Python) names this a thing a tool must not do: while one C call holds
    the GIL no Python code runs, not the signal handler and not the watchdog thread, so SIGTERM
    waits for the call (no Python-level fix exists short of running plugins in another
    process). What README promises instead is asserted: `kill -9` ends it at once, and the
    session keeps what was said up to the call (each entry is written as it comes)."""
    tool_running(launch, llm_server, "hog")
    process = launch.process
    assert process is not None
    process.send_signal(signal.SIGTERM)
    process.send_signal(signal.SIGKILL)
    try:
        process.communicate(timeout=BOUND)
    except subprocess.TimeoutExpired:
        pytest.fail("still running 5 s after SIGKILL")
    assert process.returncode == -signal.SIGKILL
    assert saved_stop_reasons(di_code_home) == ["tool_use"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (signal.SIGINT, signal.SIGTERM),
        (signal.SIGTERM, signal.SIGINT),
        (signal.SIGINT, signal.SIGINT),
    ],
    ids=["INT-then-TERM", "TERM-then-INT", "INT-twice"],
)
def test_a_second_signal_during_shutdown_keeps_the_first_signals_code(
    launch: Launch,
    llm_server: LLMServer,
    di_code_home: Path,
    first: signal.Signals,
    second: signal.Signals,
) -> None:
    """The exit is held by a plugin's non-daemon thread when the second signal comes."""
    tool_running(launch, llm_server, "keeper")
    code, seconds, stderr = launch.stop(first, second, between=0.7)
    print(f"ended in {seconds:.2f} s")
    assert code == CODES[first], stderr
    assert seconds < BOUND
    assert_quiet(stderr)
    launch.assert_nothing_left()


@EACH_SIGNAL
def test_a_command_that_traps_term_forks_a_setsid_daemon_and_writes_endlessly(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, number: signal.Signals
) -> None:
    flood = "trap '' TERM HUP INT; while :; do echo flood; done"
    command = (
        f"trap '' TERM HUP INT; setsid sh -c \"{flood} > /dev/null\" & "
        f"touch {launch.folder}/bash; {flood}"
    )
    llm_server.script(call("bash", {"command": command}), Turn(text="never asked"))
    launch.start()
    launch.wait_for("bash")
    assert_ended(launch, number, di_code_home)


@DEV_MODE
def test_a_hook_that_traps_term_and_leaves_a_setsid_daemon(
    launch: Launch, llm_server: LLMServer, user_hook: WriteHook, dev: bool
) -> None:
    """The hook's pipes, held by its daemon, are let go when the loop ends: nothing of the
    hook is finalized after it (a late close's traceback, and under Python's development mode
    its unclosed-transport and still-running warnings, followed the stop's line)."""
    if dev:
        launch.env["PYTHONDEVMODE"] = "1"
    collect_at_exit(launch)
    body = (
        "trap '' TERM HUP INT\n"
        "setsid sh -c \"trap '' TERM HUP INT; while :; do sleep 0.2; done\" &\n"
        f"touch {launch.folder}/hook\n"
        "while :; do sleep 0.2; done\n"
    )
    user_hook("UserPromptSubmit", "hook.sh", body)
    llm_server.script(Turn(text="never asked"))
    launch.start()
    launch.wait_for("hook")
    code, seconds, stderr = launch.stop(signal.SIGTERM)
    print(f"ended in {seconds:.2f} s")
    assert code == 143, stderr
    assert seconds < BOUND
    assert without_slow_steps(stderr) == "di-code: terminated\n"
    launch.assert_nothing_left()
    assert not llm_server.requests


@EACH_SIGNAL
def test_an_mcp_server_deaf_to_term_that_never_answers_initialize(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, number: signal.Signals
) -> None:
    slow_mcp_server(launch, di_code_home, helper=True, deaf=True)
    llm_server.script(Turn(text="never asked"))
    launch.start()
    launch.wait_for("slow.init")
    launch.wait_for("slow.helper")
    code, seconds, stderr = launch.stop(number)
    print(f"ended in {seconds:.2f} s")
    assert code == CODES[number], stderr
    assert seconds < BOUND
    assert_quiet(stderr)
    launch.assert_nothing_left()
    assert not llm_server.requests


def test_an_mcp_server_deaf_to_term_ends_with_a_normal_exit(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    """`servers are stopped when di-code exits`: TERM, then KILL after 2 s."""
    slow_mcp_server(launch, di_code_home, init_delay=0, helper=True, deaf=True)
    llm_server.script(Turn(text="done"))
    process = launch.start()
    started = time.monotonic()
    _, stderr = process.communicate(timeout=SAFETY_TIMEOUT)
    print(f"ended in {time.monotonic() - started:.2f} s")
    assert process.returncode == 0, stderr
    assert_quiet(stderr)
    launch.assert_nothing_left()


def test_sigterm_while_the_model_stream_stalls_with_a_deaf_mcp_server(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    slow_mcp_server(launch, di_code_home, init_delay=0, helper=True, deaf=True)
    llm_server.script(Turn(text="never whole", fault="stall", fault_after=2))
    launch.start()
    wait_until(lambda: bool(llm_server.requests), "the request")
    assert_ended(launch, signal.SIGTERM, di_code_home)


CLOSED_OUTPUT = 141


@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_a_real_head_c_1_closes_stdout_mid_answer(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, fmt: str
) -> None:
    """`di-code run … | head -c 1` with an answer bigger than the pipe: head reads a byte and
    leaves while di-code writes; di-code ends 141, nothing on stderr, the session loads."""
    # 1.4 MB in 4 KB deltas: still many times what the pipe holds (4-character ones, 350,000
    # events, took a minute to stream where the whole answer is printed at its end)
    llm_server.script(Turn(text="answer " * 200_000, chunk_size=4096))
    reader = into_head(launch, fmt)
    assert reader.stdout is not None
    assert reader.stdout.read() in (b"a", b"{")
    reader.wait(timeout=SAFETY_TIMEOUT)
    code, _, stderr = launch.ended("its output's reader left")
    assert (code, stderr) == (CLOSED_OUTPUT, "")
    saved_stop_reasons(di_code_home)  # the session loads


def test_a_real_head_c_1_on_stream_json_with_a_command_that_writes_endlessly(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    flood = f"touch {launch.folder}/bash; trap '' TERM; while :; do echo flood; done"
    llm_server.script(call("bash", {"command": flood}), Turn(text="never asked"))
    reader = into_head(launch, "stream-json")
    reader.wait(timeout=SAFETY_TIMEOUT)
    code, _, stderr = launch.ended("its output's reader left")
    assert (code, stderr) == (CLOSED_OUTPUT, "")
    assert saved_stop_reasons(di_code_home)[-1] == "aborted"


def test_esc_in_chat_ends_the_turn_of_a_tool_with_deaf_children_and_ctrl_d_leaves_none(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    with deaf_tool_in_chat(launch, llm_server, "Still here.") as child:
        started = time.monotonic()
        child.send("\x1b")
        child.expect("aborted")
        print(f"turn ended in {time.monotonic() - started:.2f} s")
        assert time.monotonic() - started < BOUND
        child.sendline("are you there")
        child.expect("Still here")
        child.sendeof()
        ended_within(child, SAFETY_TIMEOUT, "Ctrl-D", None)
        child.close()
        assert child.exitstatus == 0
        launch.assert_nothing_left()
        assert saved_stop_reasons(di_code_home) == ["tool_use", "aborted", "stop"]


def close_the_terminal(child: pexpect.spawn, launch: Launch, home: Path) -> None:
    """Close the chat's terminal window (the kernel sends SIGHUP): di-code ends within BOUND
    with 129, leaves nothing running and saves its turn as aborted."""
    started = time.monotonic()
    terminal = child.ptyproc
    terminal.fileobj.close()
    wait_until(lambda: not terminal.isalive(), "di-code to end")
    print(f"ended in {time.monotonic() - started:.2f} s")
    assert time.monotonic() - started < BOUND
    assert terminal.exitstatus == 129
    launch.assert_nothing_left()
    assert saved_stop_reasons(home)[-1] == "aborted"


def test_a_closed_terminal_in_chat_while_a_deaf_tool_runs(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    with deaf_tool_in_chat(launch, llm_server, "never asked") as child:
        close_the_terminal(child, launch, di_code_home)


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_a_signal_during_the_trust_question_ends_chat_untrusted(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, number: signal.Signals
) -> None:
    untrusted_project(launch.folder)
    child = spawned(launch, "chat", "--sandbox", "off")
    screen = Screen(child)
    try:
        screen.wait_for(QUESTION)
        started = time.monotonic()
        child.kill(number)
        child.expect(pexpect.EOF)
        child.close()
        print(f"ended in {time.monotonic() - started:.2f} s")
        assert time.monotonic() - started < BOUND
        assert child.exitstatus == CODES[number]
        assert "Traceback" not in screen.text
        assert not (di_code_home / "trusted.json").exists()
        launch.assert_nothing_left()
    finally:
        child.close(force=True)


def test_a_closed_terminal_during_a_chat_approval_with_a_deaf_mcp_server(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    slow_mcp_server(launch, di_code_home, init_delay=0, helper=True, deaf=True)
    llm_server.script(call("bash", {"command": "echo never-ran"}))
    child = spawned(launch, "chat", "--sandbox", "off")  # ask mode: the question shows
    try:
        child.expect("›")
        launch.wait_for("slow.helper")
        child.sendline("go")
        child.expect("Allow")
        close_the_terminal(child, launch, di_code_home)
    finally:
        if child.isalive():
            child.close(force=True)


def test_ctrl_c_twice_in_chat_quits_with_a_tool_whose_children_ignore_term(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    """The first Ctrl-C ends the turn (the tool left behind), two more on the empty prompt
    quit: nothing the tool started survives, the session loads."""
    with deaf_tool_in_chat(launch, llm_server, "never asked") as child:
        child.send("\x03")
        child.expect("aborted")
        child.expect("›")
        started = time.monotonic()  # a quit, not a signal: deaf children get TERM's 2 s
        child.send("\x03")
        child.send("\x03")
        shown = ended_within(child, SAFETY_TIMEOUT, "Ctrl-C twice", None)
        child.close()
        print(f"ended in {time.monotonic() - started:.2f} s")
        assert time.monotonic() - started < BOUND
        assert "Traceback" not in shown
        launch.assert_nothing_left()
        assert saved_stop_reasons(di_code_home) == ["tool_use", "aborted"]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_real_head_c_1_while_a_silent_command_runs(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, fmt: str
) -> None:
    """`| head -c 1` has left while a command that writes nothing runs (stream-json is no
    case: its next event finds the reader gone before the command starts): README's 141
    needs di-code to see the reader gone without writing."""
    silent = f"touch {launch.folder}/bash; sleep 1000"
    llm_server.script(call("bash", {"command": silent}), Turn(text="never asked"))
    reader = into_head(launch, fmt)
    launch.wait_for("bash")
    reader.kill()  # nothing was written yet: the reader leaves all the same
    reader.wait(timeout=SAFETY_TIMEOUT)
    code, _, stderr = launch.ended("its output's reader left", BOUND)
    assert (code, stderr) == (CLOSED_OUTPUT, "")
