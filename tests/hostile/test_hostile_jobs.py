"""Background jobs, attacked from README alone ("Background jobs", and the Sandbox, Permissions
and Chat sentences about them): process trees that flee their group (setsid daemons, double
forks, TERM ignored, a group of their own), a job that closes its output and lives on, output
no terminal should see (escapes, invalid UTF-8, a 100 MB line), an output file that cannot be
written, input to an ended job, to a job that never reads, control characters to a terminal,
patterns that backtrack or do not compile, absurd waits and ids, a 33rd job, a sandboxed job
reaching for the host's loopback, a mode switch, di-code killed with SIGKILL, plan and read-only.

Each case runs real processes (bash, Python, bubblewrap, a loopback listener the test starts)
and checks what README promises: by pid or by the marker in /proc, never by a clock.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal as signals
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from di_code.ai import AbortController
from di_code.tools import default_tools
from di_code.tools.builtin.support.bash_policy import BashPolicy
from di_code.tools.builtin.support.job_table import MAX_RUNNING
from di_code.tools.builtin.support.spill import SpillFolder
from di_code.tools.process.sandbox import SandboxChoice
from tests.cli.conftest import RunDiCode
from tests.cli.conftest import run_di_code as run_di_code  # the fixtures, for this folder too
from tests.cli.conftest import workspace as workspace
from tests.support.bubblewrap import needs_bubblewrap
from tests.support.jobs import background, prepared, resident_kib, start, start_web_server
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn, call
from tests.support.processes import alive, awaiting_in, until, wait_until
from tests.support.repl import chat, text_reply
from tests.support.repl import until as chat_until
from tests.support.stops import Launch, spawned
from tests.tools.conftest import error_of, run, text_of

PYTHON = os.path.realpath(sys.executable)
"""The interpreter itself, not a venv's link to it: a checkout under /tmp (as CI's) is hidden
by the sandbox's private /tmp, the interpreter's own folder is not."""

TREE = """
import os, signal, sys, time
from pathlib import Path

def forever():
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(number, signal.SIG_IGN)
    while True:
        time.sleep(1)

def note():
    with open(sys.argv[1], "a") as pids:
        pids.write(f"{os.getpid()}\\n")

if os.fork() == 0:  # a daemon in a session of its own
    os.setsid(); note(); forever()
if os.fork() == 0:  # a double fork: its parent gone, it is below no one of the job
    os.setsid()
    if os.fork() == 0:
        note(); forever()
    os._exit(0)
if os.fork() == 0:  # a process group of its own
    os.setpgid(0, 0); note(); forever()
note()
while len(Path(sys.argv[1]).read_text().split()) < 4:
    time.sleep(0.05)
print("tree ready", flush=True)
forever()
"""
"""A job whose processes leave its group every way they can, each ignoring TERM, HUP and INT;
each writes its pid in the file named by its argument, then the job says `tree ready`."""


def tree_job(folder: Path) -> str:
    (folder / "tree.py").write_text(TREE)
    return f"{PYTHON} tree.py pids"


def tree_pids(folder: Path) -> list[int]:
    return [int(word) for word in (folder / "pids").read_text().split()]


def tools_with(workspace: Path, policy: BashPolicy) -> dict[str, Any]:
    return {tool.name: tool for tool in default_tools(workspace, bash=policy)}


@pytest.fixture
def host_listener() -> Iterator[socket.socket]:
    """A server on the host's loopback that a sandboxed job must not reach."""
    server = socket.create_server(("127.0.0.1", 0))
    yield server
    server.close()


async def test_job_kill_ends_daemons_double_forks_and_groups_the_job_left(
    workspace: Path,
) -> None:
    policy = BashPolicy()
    tools = tools_with(workspace, policy)
    job = await start(tools, tree_job(workspace))
    ready = await run(tools["job_output"], {"job_id": job, "wait": 30, "pattern": "tree ready"})
    assert "Pattern seen" in text_of(ready), text_of(ready)
    pids = tree_pids(workspace)
    try:
        killed = await run(tools["job_kill"], {"job_id": job})
        assert "killed" in text_of(killed)
        await until(lambda: not [pid for pid in pids if alive(pid)], "the whole tree to end")
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, signals.SIGKILL)


async def test_a_job_that_closes_its_output_still_runs_and_is_killed(workspace: Path) -> None:
    policy = BashPolicy()
    tools = tools_with(workspace, policy)
    job = await start(tools, "echo closing; exec >&- 2>&-; echo $$ > pid; exec sleep 1000")
    await until(lambda: (workspace / "pid").exists(), "the job's pid")
    pid = int((workspace / "pid").read_text())
    read = await run(tools["job_output"], {"job_id": job, "wait": 1})
    assert "running" in text_of(read) and alive(pid), text_of(read)
    listed = text_of(await run(tools["job_list"], {}))
    assert "running" in listed, listed
    await run(tools["job_kill"], {"job_id": job})
    await until(lambda: not alive(pid), "the silent job to end")
    assert "killed" in text_of(await run(tools["job_list"], {}))


async def test_a_single_100_mb_line_costs_bounded_memory_and_a_bounded_read(
    workspace: Path, tmp_path: Path
) -> None:
    policy = BashPolicy(spill=SpillFolder(tmp_path / "spill", file_cap=4 * 1024 * 1024))
    tools = tools_with(workspace, policy)
    before = resident_kib()
    line = "head -c 100000000 /dev/zero | tr '\\0' a; echo; echo after-the-line; sleep 1000"
    job = await start(tools, line)
    seen = await run(
        tools["job_output"], {"job_id": job, "wait": 120, "pattern": "^after-the-line$"}
    )
    assert "Pattern seen" in text_of(seen), text_of(seen)[-500:]
    assert len(text_of(seen).encode()) < 60 * 1024
    assert resident_kib() - before < 100 * 1024
    await run(tools["job_kill"], {"job_id": job})


async def test_an_output_file_that_cannot_grow_loses_neither_the_job_nor_its_last_lines(
    workspace: Path, tmp_path: Path
) -> None:
    """A full disk, as the kernel says it to a file past RLIMIT_FSIZE (EFBIG, SIGXFSZ
    ignored): the job reads on, its last lines are in memory, and it is still killed."""
    policy = BashPolicy(spill=SpillFolder(tmp_path / "spill"))
    tools = tools_with(workspace, policy)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signals.signal(signals.SIGXFSZ, signals.SIG_IGN)
    script = "seq 1 2000000; echo the-last-line; exec sleep 1000"
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024 * 1024, hard))
    try:
        job = await start(tools, script)
        seen = await run(tools["job_output"], {"job_id": job, "wait": 60, "pattern": "last-line"})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signals.signal(signals.SIGXFSZ, previous)
    assert "Pattern seen" in text_of(seen), text_of(seen)[-500:]
    assert "the-last-line" in text_of(seen)
    assert "The output file keeps only the first" in text_of(seen)
    killed = await run(tools["job_kill"], {"job_id": job})
    assert "killed" in text_of(killed)


async def test_input_to_an_ended_job_or_one_that_never_reads_is_a_one_line_refusal(
    workspace: Path,
) -> None:
    tools = tools_with(workspace, BashPolicy())
    ended = await start(tools, "echo bye")
    await run(tools["job_output"], {"job_id": ended, "wait": 30})
    assert "reads no more input" in await error_of(
        tools["job_input"], {"job_id": ended, "text": "hello\n"}
    )
    deaf = await start(tools, "exec sleep 1000")
    refused = await error_of(tools["job_input"], {"job_id": deaf, "text": "x" * 10_000_000})
    assert "did not read its input" in refused
    assert "running" in text_of(await run(tools["job_list"], {}))
    await run(tools["job_kill"], {"job_id": deaf})


INTERRUPTIBLE = """
import time

try:
    input("name: ")
except KeyboardInterrupt:
    print("interrupted", flush=True)
time.sleep(1000)
"""


async def test_control_characters_and_a_huge_line_typed_into_a_terminal_job(
    workspace: Path,
) -> None:
    """A terminal's line discipline: Ctrl-C interrupts the program, a megabyte without a
    newline does not hang the call; the job is still stopped on request."""
    tools = tools_with(workspace, BashPolicy())
    (workspace / "prompt.py").write_text(INTERRUPTIBLE)
    job = await start(tools, f"{PYTHON} prompt.py", pty=True)
    await run(tools["job_output"], {"job_id": job, "wait": 30, "pattern": "name: $"})
    answer = await run(
        tools["job_input"],
        {"job_id": job, "text": "\x1b[31m\x00\x03", "wait": 30, "pattern": "interrupted"},
    )
    assert "Pattern seen" in text_of(answer), text_of(answer)
    huge = await start(tools, "cat", pty=True)
    try:
        await run(tools["job_input"], {"job_id": huge, "text": "y" * 1_000_000})
    except Exception as refused:  # a one-line refusal is an answer too; a hang is not
        assert "\n" not in str(refused)
    for each in (job, huge):
        assert "killed" in text_of(await run(tools["job_kill"], {"job_id": each}))


async def test_a_catastrophic_or_invalid_pattern_is_refused_in_one_line(workspace: Path) -> None:
    tools = tools_with(workspace, BashPolicy())
    job = await start(tools, f"{PYTHON} -c \"print('a' * 64 + '!')\"; exec sleep 1000")
    slow = await error_of(tools["job_output"], {"job_id": job, "wait": 30, "pattern": "(a+)+$"})
    assert "pattern took more than 1 s" in slow
    invalid = await error_of(tools["job_output"], {"job_id": job, "wait": 1, "pattern": "(["})
    assert "not a regular expression" in invalid
    await run(tools["job_kill"], {"job_id": job})


TURNS_TO_RETURN = 10
"""Event-loop turns a stopped wait may take to return: its wake, asyncio.wait's, the tool's."""


async def test_a_wait_stopped_by_the_user_returns_and_leaves_the_job_running(
    workspace: Path,
) -> None:
    tools = tools_with(workspace, BashPolicy())
    job = await start(tools, "exec sleep 1000")
    controller = AbortController()
    waiting = asyncio.ensure_future(
        run(tools["job_output"], {"job_id": job, "wait": 600}, controller.signal)
    )
    await until(lambda: awaiting_in(waiting, "changed"), "the wait to begin")
    controller.abort()
    for _ in range(TURNS_TO_RETURN):  # woken by the stop, not by its next look at the job
        await asyncio.sleep(0)
    assert waiting.done()
    stopped = waiting.result()
    assert "interrupted" in text_of(stopped) and "running" in text_of(stopped)
    await run(tools["job_kill"], {"job_id": job})


async def test_a_thirty_third_job_is_refused_and_a_killed_one_frees_its_place(
    workspace: Path,
) -> None:
    policy = BashPolicy()
    tools = tools_with(workspace, policy)
    try:
        # started together: each start waits out its 1 s first look at a job that prints nothing
        jobs = await asyncio.gather(*(start(tools, "exec sleep 1000") for _ in range(MAX_RUNNING)))
        refused = await error_of(tools["bash"], {"command": "sleep 1000", "background": True})
        assert str(MAX_RUNNING) in refused and "job_kill" in refused
        await run(tools["job_kill"], {"job_id": jobs[0]})
        await start(tools, "exec sleep 1000")
    finally:
        await policy.jobs.stop_all()


@needs_bubblewrap
async def test_a_sandboxed_job_does_not_reach_the_hosts_loopback_listener(
    workspace: Path, host_listener: socket.socket
) -> None:
    tools = tools_with(workspace, BashPolicy(SandboxChoice("workspace-write")))
    port = host_listener.getsockname()[1]
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected || echo refused"
    started = await run(tools["bash"], {"command": probe, "background": True})
    job = started.details["job_id"]
    ended = text_of(started) + text_of(await run(tools["job_output"], {"job_id": job, "wait": 30}))
    ended = ended.replace(probe, "")
    assert "refused" in ended and "connected" not in ended, ended
    host_listener.settimeout(0.5)
    with pytest.raises(TimeoutError):
        host_listener.accept()


@needs_bubblewrap
async def test_after_a_switch_out_of_auto_a_sandboxed_jobs_server_is_out_of_reach(
    workspace: Path,
) -> None:
    mode = ["auto"]
    policy = BashPolicy(SandboxChoice(None), mode=lambda: mode[0])
    tools = tools_with(workspace, policy)
    job, port = await start_web_server(tools)
    mode[0] = "ask"  # Shift+Tab: commands now run on the host
    fetch = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    outside = await run(tools["bash"], {"command": fetch})
    assert outside.is_error and "connected" not in text_of(outside), text_of(outside)
    assert "running" in text_of(await run(tools["job_list"], {}))  # the job kept its sandbox
    await run(tools["job_kill"], {"job_id": job})


def test_the_end_of_run_leaves_no_process_of_a_job_that_fled_its_group(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(
        Turn(
            tool_calls=(ToolCallSpec("bash", {"command": tree_job(workspace), "background": True}),)
        ),
        Turn(
            tool_calls=(
                ToolCallSpec("job_output", {"job_id": 1, "wait": 30, "pattern": "tree ready"}),
            )
        ),
        Turn(text="Started."),
    )
    done = run_di_code("run", "--permission-mode", "auto", "--sandbox", "off", "serve")
    pids = tree_pids(workspace)
    try:
        assert done.returncode == 0, done.stderr
        assert "Pattern seen" in json.dumps(llm_server.requests[-1].body)
        wait_until(lambda: not [pid for pid in pids if alive(pid)], "the whole tree to end")
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, signals.SIGKILL)


@needs_bubblewrap
def test_kill_9_of_di_code_ends_a_sandboxed_jobs_fled_processes_and_resuming_says_so(
    launch: Launch, llm_server: LLMServer
) -> None:
    launch.argv = [*launch.argv[:3], "--sandbox", "workspace-write", "go"]
    llm_server.script(
        call("bash", {"command": tree_job(launch.folder), "background": True}),
        call("job_output", {"job_id": 1, "wait": 30, "pattern": "tree ready"}),
        call("bash", {"command": "touch bash; exec sleep 1000"}),
    )
    launch.start()
    launch.wait_for("bash")
    assert len(tree_pids(launch.folder)) == 4
    assert launch.stop(signals.SIGKILL)[0] == -signals.SIGKILL
    launch.assert_nothing_left()
    llm_server.script(Turn(text="Noted."))
    again = launch.continued("is it up?")
    assert again.returncode == 0, again.stderr
    assert "was running when the session stopped; it ended" in again.stderr, again.stderr
    assert "[Background job 1 (" in json.dumps(llm_server.requests[-1].body)


ESCAPES = r"printf 'bad \xff\xfe \033]0;pwned\007\033[2J\033[31mred\r\r\r\n'; exit 3"


def test_a_jobs_escapes_and_invalid_bytes_reach_the_user_inert_and_once(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": ESCAPES, "background": True}),)),
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "sleep 2"}),)),
        Turn(text="Ended."),
    )
    done = run_di_code("run", "--permission-mode", "auto", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("exited with code 3") == 1, done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr, repr(done.stderr)
    assert "exited with code 3" in json.dumps(llm_server.requests[-1].body)


HOSTILE_ARGUMENTS: list[tuple[str, dict[str, Any] | str]] = [
    ("job_kill", {"job_id": "1"}),
    ("job_kill", {"job_id": True}),
    ("job_kill", {"job_id": -1}),
    ("job_kill", {"job_id": 2**70}),
    ("job_kill", {"job_id": "../1"}),
    ("job_output", {"job_id": 1, "wait": -5}),
    ("job_output", {"job_id": 1, "wait": 1e300}),
    ("job_input", {"job_id": 1, "text": "x", "wait": -1e300}),
]


def test_absurd_ids_and_waits_are_refused_and_kill_no_job(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    calls = [
        Turn(tool_calls=(ToolCallSpec(name, arguments),)) for name, arguments in HOSTILE_ARGUMENTS
    ]
    llm_server.script(
        Turn(
            tool_calls=(ToolCallSpec("bash", {"command": "exec sleep 1000", "background": True}),)
        ),
        *calls,
        Turn(tool_calls=(ToolCallSpec("job_list", {}),)),
        Turn(text="Done."),
    )
    done = run_di_code("run", "--permission-mode", "auto", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    last = json.dumps(llm_server.requests[-1].body)
    assert "running (pid" in last, last[-2000:]


@pytest.mark.parametrize("wait", ["NaN", "Infinity", "-Infinity"])
def test_a_wait_that_is_not_a_number_ends_the_call(
    run_di_code: RunDiCode, llm_server: LLMServer, wait: str
) -> None:
    """JSON has no NaN, but Python's parser reads it: a wait of NaN compares false with every
    bound, so it must be refused at the door, not spun on."""
    llm_server.script(
        Turn(
            tool_calls=(ToolCallSpec("bash", {"command": "exec sleep 1000", "background": True}),)
        ),
        Turn(tool_calls=(ToolCallSpec("job_output", f'{{"job_id": 1, "wait": {wait}}}'),)),
        Turn(text="Done."),
    )
    done = run_di_code("run", "--permission-mode", "auto", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    told = llm_server.requests[-1].body["messages"][-1]
    assert "arguments must be a JSON object, got text that is not valid JSON" in told["content"]


def test_a_catastrophic_pattern_does_not_freeze_run(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    job = f"{PYTHON} -c \"print('a' * 64 + '!')\"; exec sleep 1000"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": job, "background": True}),)),
        Turn(
            tool_calls=(ToolCallSpec("job_output", {"job_id": 1, "wait": 30, "pattern": "(a+)+$"}),)
        ),
        Turn(text="Done."),
    )
    started = time.monotonic()
    done = run_di_code("run", "--permission-mode", "auto", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 50
    assert "pattern took more than 1 s" in json.dumps(llm_server.requests[-1].body)


@pytest.mark.parametrize("mode", ["plan", "read-only"])
def test_plan_and_read_only_offer_no_job_tools_and_start_no_job(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, mode: str
) -> None:
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "touch started", "background": True}),)),
        Turn(tool_calls=(ToolCallSpec("job_list", {}),)),
        Turn(text="Done."),
    )
    done = run_di_code("run", "--permission-mode", mode, "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    offered = {tool["function"]["name"] for tool in llm_server.requests[0].body.get("tools", [])}
    assert not {"job_output", "job_input", "job_kill", "job_list"} & offered, offered
    assert not (workspace / "started").exists()


RAW_ESCAPES = "\x1b]0;pwned\x07\x1b[2J"
"""What would retitle and clear the user's terminal, as raw characters."""


async def test_a_jobs_escapes_in_its_command_and_output_stay_inert_in_chat(
    tmp_path: Path,
) -> None:
    command = (
        f"printf '\\033]0;pwned\\007\\033[2J\\r\\r\\xff\\n'; : '{RAW_ESCAPES}'; exec sleep 100"
    )
    ending = f"printf '\\033[2Jbye\\r\\r\\n'; : '{RAW_ESCAPES}'; exit 3"
    setup, _ = prepared(
        tmp_path,
        [
            background(command),
            text_reply("Started."),
            background(ending),
            text_reply("Again."),
        ],
    )
    assert setup.jobs is not None
    async with chat(setup) as session:
        session.type("start it\r")
        await session.answered()
        session.type("and another\r")
        await session.answered()
        await chat_until(lambda: "exited with code 3" in session.output)
        session.type("/jobs\r")
        await chat_until(lambda: "(/jobs kill N stops one)" in session.output)
        await setup.jobs.stop_all()
        session.type("/exit\r")
    shown = session.output
    assert shown.count("pwned") >= 2 and "bye" in shown  # the job's titles and lines are shown
    assert "\x1b]0;pwned" not in shown and "\x07" not in shown, repr(shown[-2000:])
    assert "\x1b[2J" not in shown, repr(shown[-2000:])


def test_a_second_di_code_on_the_session_is_refused_and_touches_no_job(
    launch: Launch, llm_server: LLMServer
) -> None:
    """Two di-code processes on one session: the second, while the first runs its job, is
    refused in one line before it asks the model anything (it could only reuse the job's id
    or call it ended); the first's job runs on, and ends with the first."""
    llm_server.script(
        call("bash", {"command": "echo first-job; exec sleep 1000", "background": True}),
        call("bash", {"command": "touch bash; exec sleep 1000"}),
    )
    launch.start()
    launch.wait_for("bash")
    asked = len(llm_server.requests)
    second = launch.continued("another")
    assert second.returncode == 2, second.stderr
    assert second.stderr.count("\n") == 1 and "in use by another di-code" in second.stderr
    assert len(llm_server.requests) == asked
    code, _, stderr = launch.stop(signals.SIGTERM)
    assert code == 143, stderr
    launch.assert_nothing_left()


def test_the_end_of_the_chat_leaves_no_process_of_a_job_that_fled_its_group(
    launch: Launch, llm_server: LLMServer
) -> None:
    llm_server.script(
        call("bash", {"command": tree_job(launch.folder), "background": True}),
        call("job_output", {"job_id": 1, "wait": 30, "pattern": "tree ready"}),
        Turn(text="Serving now."),
    )
    child = spawned(launch, "chat", "--yes", "--sandbox", "off")
    try:
        child.expect("›")
        child.sendline("serve")
        child.expect("Serving now")
        child.sendeof()
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        pids = tree_pids(launch.folder)
        assert len(pids) == 4
        wait_until(lambda: not [pid for pid in pids if alive(pid)], "the whole tree to end")
        launch.assert_nothing_left()
    finally:
        child.close(force=True)


@needs_bubblewrap
async def test_a_host_jobs_server_is_out_of_reach_of_sandboxed_commands_after_a_switch_to_auto(
    workspace: Path,
) -> None:
    mode = ["ask"]
    policy = BashPolicy(SandboxChoice(None), mode=lambda: mode[0])
    tools = tools_with(workspace, policy)
    job, port = await start_web_server(tools)
    mode[0] = "auto"  # Shift+Tab into the sandbox: no host network
    fetch = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    inside = await run(tools["bash"], {"command": fetch})
    assert inside.is_error and "connected" not in text_of(inside), text_of(inside)
    await run(tools["job_kill"], {"job_id": job})


def test_in_ask_mode_without_a_terminal_job_input_is_refused_though_its_job_was_allowed(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text('[permissions]\nallow = ["bash:cat"]\n')
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "cat", "background": True}),)),
        Turn(tool_calls=(ToolCallSpec("job_input", {"job_id": 1, "text": "typed-in\n"}),)),
        Turn(tool_calls=(ToolCallSpec("job_output", {"job_id": 1, "wait": 1}),)),
        Turn(text="Done."),
    )
    done = run_di_code("run", "--permission-mode", "ask", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    bodies = [json.dumps(request.body) for request in llm_server.requests]
    assert "Started job 1" in bodies[1], bodies[1][-2000:]
    refused = llm_server.requests[2].body["messages"][-1]["content"]
    assert refused.startswith("Permission denied: job_input needs the user's approval"), refused
    assert "typed-in" not in json.dumps(llm_server.requests[-1].body["messages"][-1])
    assert "running" in bodies[-1]
