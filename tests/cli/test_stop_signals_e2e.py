"""`di-code run` ended by SIGINT, SIGTERM or SIGHUP, or a closed pseudo-terminal, in each state
it can be in: starting its MCP servers, running a bash command, running a hook, its loop blocked
by a plugin tool (the watchdog ends it), a plugin tool deaf to the abort (it is left behind).
A stdout whose reader is gone (`| head`) ends it as SIGPIPE ends a Unix tool: exit 141, quietly.

Each test checks the exit code, that the process ends within a generous bound, and that no
process of its tree is left: every one carries a marker in its environment, looked for in /proc.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pexpect
import pytest

from tests.cli.conftest import WriteHook
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.processes import SAFETY_TIMEOUT, wait_until
from tests.support.session_files import saved_stop_reasons
from tests.support.stops import (
    ABANDONED_TOOLS,
    CODES,
    EACH_SIGNAL,
    EXIT_BOUND,
    Launch,
    slow_mcp_server,
    spawned,
)
from tests.support.stops import launch as launch


@EACH_SIGNAL
def test_a_signal_while_an_mcp_server_starts(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, number: signal.Signals
) -> None:
    slow_mcp_server(launch, di_code_home)
    llm_server.script(Turn(text="never asked"))
    launch.start()
    launch.wait_for("slow.init")
    code, seconds, stderr = launch.stop(number)
    assert code == CODES[number], stderr
    assert seconds < EXIT_BOUND
    assert "Traceback" not in stderr
    assert not llm_server.requests
    launch.assert_nothing_left()


@EACH_SIGNAL
def test_a_signal_while_a_bash_command_runs(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, number: signal.Signals
) -> None:
    llm_server.script(call("bash", {"command": f"touch {launch.folder}/bash; sleep 1000"}))
    launch.start()
    launch.wait_for("bash")
    code, seconds, stderr = launch.stop(number)
    assert code == CODES[number], stderr
    assert seconds < EXIT_BOUND
    assert saved_stop_reasons(di_code_home)[-1] == "aborted"  # the loop acted: no watchdog
    launch.assert_nothing_left()


def test_a_closed_terminal_while_a_bash_command_runs(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    llm_server.script(call("bash", {"command": f"touch {launch.folder}/bash; sleep 1000"}))
    terminal = launch.start_in_terminal()
    launch.wait_for("bash")
    started = time.monotonic()
    terminal.fileobj.close()  # the terminal window closes: the kernel sends SIGHUP
    wait_until(lambda: not terminal.isalive(), "di-code to end")
    assert time.monotonic() - started < EXIT_BOUND
    assert terminal.exitstatus == 129
    assert saved_stop_reasons(di_code_home)[-1] == "aborted"
    launch.assert_nothing_left()


def test_a_signal_while_a_hook_runs(
    launch: Launch, llm_server: LLMServer, user_hook: WriteHook
) -> None:
    user_hook("UserPromptSubmit", "hook.sh", f"touch {launch.folder}/hook\nsleep 1000\n")
    llm_server.script(Turn(text="never asked"))
    launch.start()
    launch.wait_for("hook")
    code, seconds, stderr = launch.stop(signal.SIGTERM)
    assert code == 143, stderr
    assert seconds < EXIT_BOUND
    launch.assert_nothing_left()


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_a_blocked_loop_is_ended_by_the_watchdog(
    launch: Launch, llm_server: LLMServer, number: signal.Signals
) -> None:
    llm_server.script(
        call("bash", {"command": f"sleep 1000 > /dev/null 2>&1 & touch {launch.folder}/bash"}),
        call("block", {}),
    )
    launch.start()
    launch.wait_for("block")
    code, seconds, stderr = launch.stop(number)
    assert code == CODES[number], stderr
    assert seconds < EXIT_BOUND
    launch.assert_nothing_left()  # the background job bash left is killed too


@pytest.mark.parametrize("tool", ABANDONED_TOOLS)
@EACH_SIGNAL
def test_a_tool_that_does_not_listen_is_left_behind(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, tool: str, number: signal.Signals
) -> None:
    """One signal ends the turn and the process, whatever the tool does with it: its task or
    thread is abandoned, its end is not waited for."""
    llm_server.script(call(tool, {}))
    launch.start()
    launch.wait_for(tool)
    code, seconds, stderr = launch.stop(number)
    assert code == CODES[number], stderr
    assert seconds < EXIT_BOUND
    assert "Traceback" not in stderr
    assert saved_stop_reasons(di_code_home)[-1] == "aborted"  # the loop acted: no watchdog
    launch.assert_nothing_left()


@pytest.mark.parametrize("tool", ["busy", "sleeper"])
@EACH_SIGNAL
def test_a_signal_that_a_tools_thread_receives_stops_the_run(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, tool: str, number: signal.Signals
) -> None:
    """The kernel hands a process's signal to another thread while the main thread blocks
    signals (for an instant: glibc's pthread_create does so while it makes a thread), and
    Python runs the handler on the main thread only, once that thread runs again: asleep in the
    event loop with nothing due, it did not, and di-code ran on (CI: INT-busy above, once)."""
    llm_server.script(call(tool, {}))
    launch.start()
    launch.wait_for(tool)
    thread = int((launch.folder / tool).read_text())
    code, seconds, stderr = launch.stop(number, thread=thread)
    assert code == CODES[number], stderr
    assert seconds < EXIT_BOUND
    assert "Traceback" not in stderr
    assert saved_stop_reasons(di_code_home)[-1] == "aborted"  # the loop acted: no watchdog
    launch.assert_nothing_left()


@EACH_SIGNAL
def test_a_signal_that_the_main_thread_blocks_stops_the_run(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, number: signal.Signals
) -> None:
    """The same, the kernel's own choice: a tool blocks the stop signals on the main thread,
    and a process's signal goes to a thread that does not."""
    llm_server.script(call("masking", {}))
    launch.start()
    launch.wait_for("masking")
    code, seconds, stderr = launch.stop(number)
    assert code == CODES[number], stderr
    assert seconds < EXIT_BOUND
    assert "Traceback" not in stderr
    assert saved_stop_reasons(di_code_home)[-1] == "aborted"
    launch.assert_nothing_left()


def test_an_mcp_servers_own_setsid_child_ends_with_a_normal_exit(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    slow_mcp_server(launch, di_code_home, init_delay=0, helper=True)
    llm_server.script(Turn(text="done"))
    process = launch.start()
    _, stderr = process.communicate(timeout=SAFETY_TIMEOUT)
    assert process.returncode == 0, stderr
    assert (launch.folder / "slow.helper").exists()
    launch.assert_nothing_left()


@EACH_SIGNAL
def test_an_mcp_servers_own_setsid_child_ends_with_a_signal(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, number: signal.Signals
) -> None:
    slow_mcp_server(launch, di_code_home, init_delay=0, helper=True)
    llm_server.script(call("bash", {"command": f"touch {launch.folder}/bash; sleep 1000"}))
    launch.start()
    launch.wait_for("bash")
    launch.wait_for("slow.helper")
    code, seconds, stderr = launch.stop(number)
    assert code == CODES[number], stderr
    assert seconds < EXIT_BOUND
    launch.assert_nothing_left()


def test_kill_9_takes_the_mcp_server_and_the_command_with_it(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    """No handler runs on SIGKILL: the kernel ends each child (PR_SET_PDEATHSIG)."""
    slow_mcp_server(launch, di_code_home)
    llm_server.script(call("bash", {"command": f"touch {launch.folder}/bash; exec sleep 1000"}))
    launch.start()
    launch.wait_for("slow.init")
    assert launch.stop(signal.SIGKILL)[0] == -signal.SIGKILL
    launch.assert_nothing_left()
    (di_code_home / "config.toml").unlink()  # the model's first reply is the one left
    launch.start()
    launch.wait_for("bash")
    assert launch.stop(signal.SIGKILL)[0] == -signal.SIGKILL
    launch.assert_nothing_left()


def reading_stdin(pid: int) -> bool:
    """The process waits in read(2) on descriptor 0 (x86-64's syscall number 0)."""
    try:
        return Path(f"/proc/{pid}/syscall").read_text().startswith("0 0x0 ")
    except OSError:
        return False


def reading_its_prompt(launch: Launch) -> subprocess.Popen[str]:
    """di-code started with no prompt argument, once it waits for the prompt on its stdin (a
    pipe left open with nothing written)."""
    launch.argv = launch.argv[:-1]
    process = subprocess.Popen(
        launch.argv,
        cwd=launch.folder,
        env=launch.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    launch.process = process
    wait_until(lambda: reading_stdin(process.pid), "di-code to read its prompt")
    return process


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="reads x86-64 syscall numbers")
@EACH_SIGNAL
def test_a_signal_while_the_prompt_is_read_from_stdin(
    launch: Launch, llm_server: LLMServer, number: signal.Signals
) -> None:
    reading_its_prompt(launch)
    code, seconds, stderr = launch.stop(number)
    assert code == CODES[number], stderr
    assert seconds < EXIT_BOUND
    assert "Traceback" not in stderr
    assert not llm_server.requests


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="reads x86-64 syscall numbers")
def test_a_signal_another_thread_receives_while_the_prompt_is_read(
    launch: Launch, llm_server: LLMServer
) -> None:
    """A signal that another thread receives (here stop_signals' own, the only other one) does
    not interrupt the main thread's read, which runs no handler then: the process is ended 1 s
    on (ACT_WITHIN), as a signal ends it there."""
    process = reading_its_prompt(launch)
    others = [int(task.name) for task in Path(f"/proc/{process.pid}/task").iterdir()]
    others.remove(process.pid)
    assert others, "no thread but the main one"
    code, seconds, stderr = launch.stop(signal.SIGTERM, thread=others[0])
    assert (code, stderr) == (143, "di-code: terminated\n")
    assert seconds < EXIT_BOUND
    assert not llm_server.requests


CLOSED_OUTPUT = 141


def test_stream_json_into_a_closed_pipe_stops_the_run_and_its_command(
    launch: Launch, llm_server: LLMServer
) -> None:
    ticking = f"touch {launch.folder}/bash; while :; do echo tick; sleep 0.05; done"
    llm_server.script(call("bash", {"command": ticking}), Turn(text="never asked"))
    launch.argv[2:2] = ["--output-format", "stream-json"]
    process = launch.start()
    assert process.stdout is not None
    process.stdout.read(10)  # what `head -c 10` reads before it ends
    launch.wait_for("bash")
    process.stdout.close()
    _, stderr = process.communicate(timeout=SAFETY_TIMEOUT)
    assert (process.returncode, stderr) == (CLOSED_OUTPUT, "")
    launch.assert_nothing_left()  # the ticking command's group stopped
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_answer_into_a_closed_pipe_ends_quietly(
    launch: Launch, llm_server: LLMServer, fmt: str
) -> None:
    llm_server.script(Turn(text="answer " * 1000))
    launch.argv[2:2] = ["--output-format", fmt]
    process = launch.start()
    assert process.stdout is not None
    process.stdout.close()  # the reader is gone before the answer comes: seen at once, or
    _, stderr = process.communicate(timeout=SAFETY_TIMEOUT)  # at the answer's write
    assert (process.returncode, stderr) == (CLOSED_OUTPUT, "")


@EACH_SIGNAL
def test_a_signal_while_the_model_stream_stalls(
    launch: Launch, llm_server: LLMServer, di_code_home: Path, number: signal.Signals
) -> None:
    llm_server.script(Turn(text="never whole", fault="stall", fault_after=2))
    launch.start()
    wait_until(lambda: bool(llm_server.requests), "the request")
    code, seconds, stderr = launch.stop(number)
    assert code == CODES[number], stderr
    assert seconds < EXIT_BOUND
    assert saved_stop_reasons(di_code_home)[-1] == "aborted"


def test_sigterm_while_an_approval_question_is_pending(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    llm_server.script(call("bash", {"command": "echo never-ran"}))
    child = spawned(launch, "run", "--sandbox", "off", "go")  # ask mode: the question shows
    try:
        child.expect("Allow\\?")
        started = time.monotonic()
        child.kill(signal.SIGTERM)
        child.expect(pexpect.EOF)
        child.close()
        assert time.monotonic() - started < EXIT_BOUND
        assert child.exitstatus == 143
        assert saved_stop_reasons(di_code_home)[-1] == "aborted"
    finally:
        child.close(force=True)


def test_sigterm_while_the_chats_mcp_server_starts(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    slow_mcp_server(launch, di_code_home)
    child = spawned(launch, "chat", "--sandbox", "off")
    try:
        child.expect("›")
        launch.wait_for("slow.init")
        started = time.monotonic()
        child.kill(signal.SIGTERM)
        child.expect(pexpect.EOF)
        child.close()
        assert time.monotonic() - started < EXIT_BOUND
        assert child.exitstatus == 143
        launch.assert_nothing_left()
    finally:
        child.close(force=True)
