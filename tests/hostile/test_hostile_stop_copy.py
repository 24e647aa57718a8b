"""Ending at once (a forked copy of di-code does the work) and the stop beside a computing
thread, attacked from README alone: plugin tools whose threads hold the locks a fork's
handlers take, whose at-fork handlers never return, or that compute on many threads at once.
(A tool that sets the switch interval again while the stop runs makes it last to the watchdog,
2 s, most times: README says so; no case, its time is a race.)

The rule under attack: SIGTERM ends `run` within a second (the watchdog's end at once when the
event loop is blocked), every child's tree with it, exit 143, one line on stderr, the session
loads.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.llm_server import LLMServer, Turn, call
from tests.support.session_files import saved_stop_reasons
from tests.support.stops import BOUND, CODES, DEAF_SHELL, Launch, assert_ended, plugin_site

PLUGIN = '''
import logging.config, os, subprocess, threading, time
from pathlib import Path

FOLDER = os.environ["STOP_TEST_DIR"]


def started(name):
    Path(FOLDER, name).write_text("started")


def deaf_child():
    """A TERM-ignoring shell the tool starts itself: ending at once must kill it."""
    subprocess.Popen(
        ["sh", "-c", """DEAF_SHELL""".format(folder=FOLDER, name="child")],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    while not Path(FOLDER, "child").exists():
        time.sleep(0.02)


def computing():
    n = 0
    while True:
        n += 1


class _Tool:
    description = "for the stop copy tests"
    parameters = {"type": "object"}


class Logjam(_Tool):
    """An async def that blocks the event loop (the watchdog must end di-code at once) while a
    thread of its holds logging's module lock for ever: `dictConfig` holds it while it makes
    the handlers, and this handler's factory never returns (a log server that never answers).
    Python's fork takes that lock first (logging's at-fork handler)."""
    name = "logjam"

    async def execute(self, tool_call_id, params, signal=None):
        deaf_child()
        inside = threading.Event()

        def never(**_):
            inside.set()
            time.sleep(1000)

        config = {"version": 1, "handlers": {"stuck": {"()": never}}}
        threading.Thread(target=logging.config.dictConfig, args=(config,), daemon=True).start()
        inside.wait()
        started(self.name)
        time.sleep(1000)


class Forkstuck(_Tool):
    """An async def that blocks the event loop, having registered an at-fork handler that never
    returns in a forked child (as a library's may deadlock there): the copy that ends di-code
    at once never begins its work."""
    name = "forkstuck"

    async def execute(self, tool_call_id, params, signal=None):
        deaf_child()
        os.register_at_fork(after_in_child=lambda: time.sleep(1000))
        started(self.name)
        time.sleep(1000)


class Crowd(_Tool):
    """A plain def that computes on 50 threads of its own, and its own."""
    name = "crowd"

    def execute(self, tool_call_id, params, signal=None):
        for _ in range(50):
            threading.Thread(target=computing, daemon=True).start()
        started(self.name)
        computing()
'''.replace("DEAF_SHELL", DEAF_SHELL)

TOOLS = ["logjam", "forkstuck", "crowd"]


def running(launch: Launch, server: LLMServer, tool: str) -> None:
    """`di-code run` with this file's plugin, its model calling `tool`: returns once it runs."""
    launch.env["PYTHONPATH"] = str(plugin_site(launch.folder, PLUGIN, TOOLS, site="copy-site"))
    server.script(call(tool, {}), Turn(text="never asked"))
    launch.start()
    launch.wait_for(tool)


@pytest.mark.parametrize(
    ("tool", "signals"),
    [
        ("logjam", [signal.SIGTERM]),
        ("forkstuck", [signal.SIGTERM]),
        ("forkstuck", [signal.SIGTERM] * 3),
    ],
    ids=["fork-held", "copy-held", "copy-held-three-signals"],
)
def test_ending_at_once_when_an_at_fork_handler_never_returns(
    launch: Launch,
    llm_server: LLMServer,
    di_code_home: Path,
    tool: str,
    signals: list[signal.Signals],
) -> None:
    """The loop is blocked, so the watchdog (or the second signal) ends di-code at once, by a
    fork: one held in Python's at-fork handlers (logging's, which takes a lock the tool's
    thread holds for ever), or a copy held in a plugin's. Once ending, more signals change
    nothing: still one line."""
    running(launch, llm_server, tool)
    code, seconds, stderr = launch.stop(*signals, between=0.2)
    print(f"ended in {seconds:.2f} s")
    assert code == CODES[signal.SIGTERM], stderr
    assert seconds < BOUND
    assert stderr == "di-code: terminated\n"
    launch.assert_nothing_left()
    saved_stop_reasons(di_code_home)  # the session loads


def test_a_tool_computing_on_fifty_threads_ends_with_sigterm(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    running(launch, llm_server, "crowd")
    assert_ended(launch, signal.SIGTERM, di_code_home)


NAMED_IN_BOTH = """
import os
from di_code.system import stop_signals
stop_signals.install()
copy = os.fork()  # made before anyone named the stop, as ending at once makes its copy
if copy == 0:
    stop_signals.say(15)
    os._exit(0)
os.waitpid(copy, 0)
stop_signals.say(15)  # the clean stop names it too
"""


def test_the_stop_is_named_once_by_di_code_and_a_copy_forked_before_either_named_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", NAMED_IN_BOTH], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "di-code: terminated\n"
