"""Background jobs in the editor's terminals: a client that advertises `terminal` runs each
job bash starts in the background (but one with a pty) as a terminal of its own, embedded in
the bash call; job_output reads through it, job_list lists it, job_kill kills and releases
it, a job that exits on its own is released and told, and the session's end releases every
one. An editor without terminals keeps jobs in di-code's own processes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp.schema import ClientCapabilities, ToolCallProgress, ToolCallStart  # noqa: E402

from tests.cli.conftest import DI_CODE, cli_env  # noqa: E402
from tests.support.acp_editor import TIMEOUT, TerminalClient, prompt  # noqa: E402
from tests.support.acp_jobs import TERMINAL, DeafToKills, call, logged, results, started  # noqa: E402
from tests.support.bubblewrap import needs_bubblewrap  # noqa: E402
from tests.support.llm_server import LLMServer, Turn  # noqa: E402
from tests.support.local_port import free_port  # noqa: E402

PYTHON = os.path.realpath(sys.executable)
"""The interpreter itself, not a venv's link to it (the sandbox's private /tmp hides one)."""


@pytest.fixture
def editor(editor_env: dict[str, str]) -> TerminalClient:
    return TerminalClient(editor_env)


async def test_a_job_is_an_editor_terminal_read_listed_and_killed_through_it(
    agent: Any, llm_server: LLMServer, workspace: Path, editor: TerminalClient
) -> None:
    job = "echo first; while [ ! -e go ]; do sleep 0.05; done; echo listening; sleep 100"
    llm_server.script(
        call("bash", command=job, background=True),
        call("write", path=str(workspace / "go"), content=""),
        call("job_output", job_id=1, wait=30, pattern="^listening$"),
        call("job_list"),
        call("job_input", job_id=1, text="hello\n"),
        call("job_kill", job_id=1),
        Turn(text="done"),
    )
    conn, session_id = await started(agent, editor, workspace)
    assert (await prompt(conn, session_id, "serve")).stop_reason == "end_turn"

    begun, _, waited, listed, typed, killed = results(llm_server)
    assert begun.startswith("Started job 1 (`echo first;")
    assert "running (in the editor's terminal term-1" in begun and "\nfirst\n" in begun
    assert "which takes no input" in begun
    assert "[Pattern seen: '^listening$']" in waited and "listening" in waited
    assert "running (in the editor's terminal term-1" in listed
    assert "takes no input" in typed
    assert killed.startswith("job 1 (`echo first;") and ": killed" in killed
    terminal = editor.terminals["term-1"]
    assert terminal.cwd == str(workspace)
    assert terminal.process.returncode is not None
    term_calls = [entry for entry in editor.log if entry[0] != "ask"]
    assert term_calls[0] == ("create", "term-1")
    assert term_calls[-4:] == [
        ("kill", "term-1"),
        ("exited", "term-1"),
        ("output", "term-1"),
        ("release", "term-1"),
    ]
    assert ("output", "term-1") in term_calls[1:-4]  # the reads went through the editor
    # the terminal is shown in the bash call, and stays there when the call ends
    [bash_call, *_] = editor.of(ToolCallStart)
    shown = [u for u in editor.of(ToolCallProgress) if u.tool_call_id == bash_call.tool_call_id]
    embedded, ended, *_ = shown  # (the scripted server names every turn's call `call_1`)
    assert [c.type for c in embedded.content] == ["terminal"]
    assert ended.status == "completed" and [c.type for c in ended.content] == ["terminal"]


async def test_a_job_that_exits_on_its_own_is_released_and_told(
    agent: Any, llm_server: LLMServer, workspace: Path, editor: TerminalClient
) -> None:
    job = "echo waiting; while [ ! -e go ]; do sleep 0.05; done; echo bye; exit 3"
    llm_server.script(call("bash", command=job, background=True), Turn(text="started"))
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "start it")
    (workspace / "go").touch()
    await logged(editor, ("release", "term-1"))
    assert editor.log[-3:] == [("exited", "term-1"), ("output", "term-1"), ("release", "term-1")]

    llm_server.script(Turn(text="seen"))
    await prompt(conn, session_id, "and now?")
    sent = str(llm_server.requests[-1].body["messages"])
    assert "[Background job 1 (`echo waiting;" in sent and "exited with code 3" in sent
    assert "bye" in sent
    assert "exited with code 3; last lines:\nwaiting\nbye]" in editor.said()


async def test_the_sessions_end_kills_and_releases_every_job_terminal(
    agent: Any, llm_server: LLMServer, workspace: Path, editor: TerminalClient
) -> None:
    llm_server.script(
        call("bash", command="exec sleep 100", background=True),
        call("bash", command="exec sleep 200", background=True),
        Turn(text="both run"),
    )
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "start them")
    assert [t.process.returncode for t in editor.terminals.values()] == [None, None]
    await asyncio.wait_for(conn.close_session(session_id=session_id), TIMEOUT)
    for terminal_id, terminal in editor.terminals.items():
        assert ("release", terminal_id) in editor.log
        assert terminal.process.returncode is not None


async def test_the_editors_connection_ending_ends_the_jobs_it_ran(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, editor: TerminalClient
) -> None:
    """An editor gone (its pipe closed) can neither kill nor release: di-code ends the job's
    processes itself before it exits, by the DI_CODE_JOB mark they carry (this editor leaves
    its terminals running)."""
    from acp import PROTOCOL_VERSION
    from acp.stdio import spawn_agent_process

    from tests.support.acp_schema import SentMessages

    sent = SentMessages()
    llm_server.script(call("bash", command="exec sleep 100", background=True), Turn(text="runs"))
    args = ("acp", "--permission-mode", "auto", "--sandbox", "off")
    env = cli_env(di_code_home, llm_server)
    spawned = spawn_agent_process(editor, DI_CODE, *args, env=env, observers=[sent])
    ended = None
    with contextlib.suppress(ConnectionResetError):  # the editor's answers to a closed pipe
        async with spawned as (conn, process):
            hello = conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=TERMINAL)
            await asyncio.wait_for(hello, TIMEOUT)
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await prompt(conn, session.session_id, "start it")
            terminal = editor.terminals["term-1"]
            assert terminal.process.returncode is None
            process.stdin.close()
            assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
            ended = await asyncio.wait_for(terminal.process.wait(), TIMEOUT)
    assert ended is not None
    await asyncio.to_thread(sent.check)


async def test_without_editor_terminals_or_with_a_pty_a_job_runs_in_di_code(
    agent: Any, llm_server: LLMServer, workspace: Path, editor: TerminalClient
) -> None:
    llm_server.script(
        call("bash", command="echo local-job; exec sleep 100", background=True, pty=True),
        Turn(text="started"),
    )
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "a terminal job")
    assert editor.terminals == {}
    [begun] = results(llm_server)
    assert "running (pid " in begun and "local-job" in begun

    plain = TerminalClient(editor.base_env)
    llm_server.script(
        call("bash", command="echo local-job; exec sleep 100", background=True),
        Turn(text="started"),
    )
    conn, session_id = await started(agent, plain, workspace, ClientCapabilities())
    await prompt(conn, session_id, "a job")
    assert plain.terminals == {}
    [begun] = results(llm_server)
    assert "running (pid " in begun and "local-job" in begun


async def test_an_editor_that_never_answers_a_kill_holds_job_kill_up_only_so_long(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = DeafToKills(editor_env)
    llm_server.script(
        call("bash", command="exec sleep 100", background=True),
        call("job_kill", job_id=1),
        Turn(text="done"),
    )
    conn, session_id = await started(agent, editor, workspace)
    assert (await prompt(conn, session_id, "start and stop")).stop_reason == "end_turn"
    killed = results(llm_server)[-1]
    assert killed.startswith("job 1 (`exec sleep 100`): killed"), killed
    kill, release = ("kill", "term-1"), ("release", "term-1")
    assert editor.log.index(kill) < editor.log.index(release)
    # the editor never killed it: di-code did, by the DI_CODE_JOB mark its processes carry
    await asyncio.wait_for(editor.terminals["term-1"].process.wait(), TIMEOUT)


@needs_bubblewrap
async def test_a_sandboxed_server_job_in_a_terminal_is_reached_by_a_later_command(
    agent: Any, llm_server: LLMServer, workspace: Path, editor: TerminalClient
) -> None:
    """The editor runs the sandboxed command line, in the session's network namespace: a
    server a job started there is reached by a later bash call (in a terminal too), and not
    from the host."""
    port = free_port()
    server = f"{PYTHON} -u -m http.server {port} --bind 127.0.0.1"
    fetch = (
        f'{PYTHON} -c "import urllib.request as u; '
        f"print(u.urlopen('http://127.0.0.1:{port}/', timeout=10).status)\""
    )
    llm_server.script(
        call("bash", command=server, background=True),
        call("job_output", job_id=1, wait=30, pattern="Serving HTTP"),
        call("bash", command=fetch),
        Turn(text="served"),
    )
    conn = await agent(
        editor, "--permission-mode", "auto", "--sandbox", "workspace-write", capabilities=TERMINAL
    )
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "serve and fetch")
    _, waited, fetched = results(llm_server)
    assert "Pattern seen" in waited, waited
    assert fetched.strip() == "200", fetched
    job = editor.terminals["term-1"]
    assert any(Path(part).name == "bwrap" for part in job.command)
    with socket.socket() as probe:  # the host does not see the sandbox's loopback
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    await asyncio.wait_for(conn.close_session(session_id=session.session_id), TIMEOUT)
    assert job.process.returncode is not None
