"""Background jobs as editor terminals over ACP (README, "Background jobs", its ACP paragraph),
and job_input's permissions, attacked by a hostile editor, a hostile model and a hostile job.

The editor answers terminal/* wrongly or never (an output it never sends, a create it answers
late, an exit it cannot tell, a kill that kills nothing); the session is cancelled and closed
while jobs run; a job traps TERM, double-forks, leaves children in its group, prints without
end; twenty run at once; names and typed text carry newlines, escapes and bidi controls; and
job_input is asked, granted, denied. Every message is checked against the ACP v1 schema (the
`agent` fixture)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    RequestPermissionResponse,
    ToolCallStart,
    WaitForTerminalExitResponse,
)

from tests.acp.conftest import agent as agent
from tests.acp.conftest import editor_env as editor_env
from tests.acp.conftest import workspace as workspace
from tests.cli.conftest import API_KEY, DI_CODE, cli_env
from tests.support.acp_editor import TIMEOUT, TerminalClient, prompt
from tests.support.acp_jobs import (
    TERMINAL,
    DeafToKills,
    NoExitWaits,
    call,
    logged,
    mark_of,
    marked,
    none_left,
    results,
    started,
)
from tests.support.acp_schema import SentMessages
from tests.support.bubblewrap import needs_bubblewrap
from tests.support.llm_server import LLMServer, Turn
from tests.support.permission_gates import gate_of

STOP_BOUND = 3.0
"""Seconds a stop may take on a loaded machine (a tool left behind goes after 0.5 s; the
editor's requests are each held up to 5 s)."""
PYTHON = os.path.realpath(sys.executable)


async def gone(pid: int) -> bool:
    for _ in range(TIMEOUT * 10):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].startswith("Z"):
            return True
        await asyncio.sleep(0.1)
    return False


# --- an editor that answers wrongly or never -------------------------------------------


class SilentOutput(TerminalClient):
    """An editor that never answers `terminal/output`."""

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.log.append(("output", terminal_id))
        await asyncio.Event().wait()


async def test_esc_during_a_wait_on_an_editor_that_never_sends_output_ends_the_turn_at_once(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """The read asks the editor every half second; an editor that never answers must not
    hold the stop (README: Esc stops the turn at once, a waiting job_output returns), and the
    job runs on."""
    editor = SilentOutput(editor_env)
    llm_server.script(
        call("bash", command="exec sleep 100", background=True),
        call("job_output", job_id=1, wait=600, pattern="never"),
        Turn(text="unreached"),
    )
    conn, session_id = await started(agent, editor, workspace)
    turn = asyncio.ensure_future(prompt(conn, session_id, "serve"))
    for _ in range(TIMEOUT * 20):
        if len(editor.of(ToolCallStart)) == 2 or turn.done():
            break
        await asyncio.sleep(0.05)
    assert len(editor.of(ToolCallStart)) == 2, "job_output never started"
    await logged(editor, ("output", "term-1"))
    loop = asyncio.get_running_loop()
    stopped_at = loop.time()
    await conn.cancel(session_id=session_id)
    answer = await asyncio.wait_for(turn, TIMEOUT)
    assert answer.stop_reason == "cancelled"
    assert loop.time() - stopped_at < STOP_BOUND
    assert editor.terminals["term-1"].process.returncode is None  # the stop ends the turn only


class LateCreate(TerminalClient):
    """An editor that starts the command at once but answers `terminal/create` only when
    `answer` is set (a slow editor, or one that answers after the user stopped)."""

    def __init__(self, base_env: dict[str, str]) -> None:
        super().__init__(base_env)
        self.answer = asyncio.Event()

    async def create_terminal(self, session_id: str, command: str, **kw: Any) -> Any:
        created = await super().create_terminal(session_id, command, **kw)
        await self.answer.wait()
        return created


async def test_a_terminal_created_after_the_turn_was_stopped_and_the_session_closed_dies(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """The bash call is left behind by Esc before the editor says which terminal it made;
    when the answer finally comes, the session is closed: the command must not run on in a
    session that has ended. (Its terminal is not released: di-code never learnt its id.)"""
    editor = LateCreate(editor_env)
    llm_server.script(call("bash", command="exec sleep 300", background=True), Turn(text="x"))
    conn, session_id = await started(agent, editor, workspace)
    turn = asyncio.ensure_future(prompt(conn, session_id, "serve"))
    await logged(editor, ("create", "term-1"))
    await conn.cancel(session_id=session_id)
    assert (await asyncio.wait_for(turn, TIMEOUT)).stop_reason == "cancelled"
    await asyncio.wait_for(conn.close_session(session_id=session_id), TIMEOUT)
    mark = mark_of(editor)
    editor.answer.set()
    await none_left(mark)


async def test_an_editor_that_cannot_wait_for_an_exit_does_not_end_the_job(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """README: a job ends on its own, by job_kill, or with the session; nothing else ends it."""
    editor = NoExitWaits(editor_env)
    llm_server.script(
        call("bash", command="echo up; exec sleep 300", background=True),
        call("job_list"),
        Turn(text="listed"),
    )
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "serve")
    _, listed = results(llm_server)
    assert "stopped when its session ended" not in listed, listed
    assert "running" in listed, listed
    assert editor.terminals["term-1"].process.returncode is None


class NumbKills(TerminalClient):
    """An editor that answers `terminal/kill` and `terminal/release` and kills nothing."""

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.log.append(("kill", terminal_id))
        return None

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.log.append(("release", terminal_id))
        return None


TERM_PROOF = (
    "trap '' TERM; setsid sh -c 'trap \"\" TERM; exec sleep 300' & "
    "( sleep 300 & ) ; echo started; while :; do sleep 1; done"
)
"""A job that ignores TERM, double-forks a daemon into a session of its own and leaves a
grandchild reparented away from it."""


async def test_closing_the_session_ends_a_term_proof_double_forking_job_whatever_the_editor_does(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = NumbKills(editor_env)
    llm_server.script(
        call("bash", command=TERM_PROOF, background=True),
        call("job_output", job_id=1, wait=30, pattern="^started$"),
        Turn(text="runs"),
    )
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "serve")
    assert "Pattern seen" in results(llm_server)[-1]
    mark = mark_of(editor)
    assert len(marked(mark)) >= 3
    await asyncio.wait_for(conn.close_session(session_id=session_id), TIMEOUT)
    await none_left(mark)
    assert ("release", "term-1") in editor.log


class ExitsAtExit(TerminalClient):
    """An editor that tells a command's exit when its process exits (not when its output
    closes: a child it left may hold that open)."""

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        terminal = self.terminals[terminal_id]
        while terminal.process.returncode is None:  # (its wait() waits for the pipes too)
            await asyncio.sleep(0.05)
        self.log.append(("exited", terminal_id))
        return WaitForTerminalExitResponse(**terminal.status())


async def test_what_a_terminal_job_left_in_its_group_ends_when_it_exits_on_its_own(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """README: a job that ends on its own: whatever it left running in its process group is
    killed with it. The editor's release kills nothing that is left (its command exited)."""
    editor = ExitsAtExit(editor_env)
    job = "sleep 300 & echo $! > child.pid; while [ ! -e go ]; do sleep 0.05; done; exit 4"
    llm_server.script(call("bash", command=job, background=True), Turn(text="started"))
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "start it")
    for _ in range(TIMEOUT * 20):
        if (workspace / "child.pid").read_text().strip():
            break
        await asyncio.sleep(0.05)
    child = int((workspace / "child.pid").read_text())
    (workspace / "go").touch()
    await logged(editor, ("release", "term-1"))
    try:
        assert await gone(child), "the job's child outlived the job's end"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


class OneIdForAll(TerminalClient):
    """An editor that answers every `terminal/create` with the same id: every request about
    any job reaches the first terminal only."""

    async def create_terminal(self, session_id: str, command: str, **kw: Any) -> Any:
        created = await super().create_terminal(session_id, command, **kw)
        created.terminal_id = "term-1"
        return created


async def test_an_editor_giving_every_job_the_same_terminal_id_leaves_no_job_running(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """Job 2's kill reaches job 1's terminal; the session's end must still leave no process
    of either (di-code kills what carries each job's mark)."""
    editor = OneIdForAll(editor_env)
    llm_server.script(
        call("bash", command="echo one; exec sleep 300", background=True),
        call("bash", command="echo two; exec sleep 300", background=True),
        call("job_kill", job_id=2),
        Turn(text="one left"),
    )
    conn, session_id = await started(agent, editor, workspace)
    assert (await prompt(conn, session_id, "serve")).stop_reason == "end_turn"
    marks = [mark_of(editor, "term-1"), mark_of(editor, "term-2")]
    assert marked(marks[1]) == []  # job 2 killed: whatever the editor did, it is gone
    await asyncio.wait_for(conn.close_session(session_id=session_id), TIMEOUT)
    for mark in marks:
        await none_left(mark)


async def test_closing_a_session_with_an_editor_deaf_to_kills_ends_in_time_with_no_process_left(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """README: an editor that does not answer holds up the kill, then the release, for at
    most 5 s each; the jobs are stopped all at once, not one after the other."""
    editor = DeafToKills(editor_env)
    llm_server.script(
        *(call("bash", command=TERM_PROOF, background=True) for _ in range(3)),
        Turn(text="three run"),
    )
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "serve")
    marks = [mark_of(editor, f"term-{n}") for n in (1, 2, 3)]
    await asyncio.wait_for(conn.close_session(session_id=session_id), TIMEOUT)
    for mark in marks:
        await none_left(mark)


@contextlib.asynccontextmanager
async def own_agent(
    editor: TerminalClient, home: Path, server: LLMServer, *args: str
) -> AsyncIterator[tuple[Any, asyncio.subprocess.Process]]:
    """`di-code acp` as the `agent` fixture starts it, with its process at hand (to signal);
    every message it sent checked against ACP v1 at the end."""
    from acp import PROTOCOL_VERSION
    from acp.stdio import spawn_agent_process

    sent = SentMessages()
    env = cli_env(home, server)
    spawned = spawn_agent_process(editor, DI_CODE, "acp", *args, env=env, observers=[sent])
    with contextlib.suppress(ConnectionResetError, BrokenPipeError):  # a killed agent's pipe
        async with spawned as (conn, process):
            hello = conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=TERMINAL)
            await asyncio.wait_for(hello, TIMEOUT)
            yield conn, process
    await asyncio.to_thread(sent.check)


async def test_sigterm_to_di_code_ends_a_term_proof_double_forking_terminal_job(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, editor_env: dict[str, str]
) -> None:
    """README: di-code's exit for any other reason stops every job; the editor here answers
    kills and releases and kills nothing."""
    editor = NumbKills(editor_env)
    llm_server.script(call("bash", command=TERM_PROOF, background=True), Turn(text="runs"))
    async with own_agent(
        editor, di_code_home, llm_server, "--permission-mode", "auto", "--sandbox", "off"
    ) as (conn, process):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await prompt(conn, session.session_id, "serve")
        mark = mark_of(editor)
        assert marked(mark)
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), TIMEOUT)
    await none_left(mark)


@needs_bubblewrap
@pytest.mark.xfail(
    strict=True,
    reason="kill -9 of di-code leaves a sandboxed job in the editor's terminal running: its "
    "bubblewrap is the editor's child, and nothing of di-code is left to kill it",
)
async def test_kill_9_of_di_code_ends_a_sandboxed_job_in_an_editors_terminal(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, editor_env: dict[str, str]
) -> None:
    """README: in the sandbox kill -9 of di-code stops its jobs as well."""
    editor = TerminalClient(editor_env)
    llm_server.script(call("bash", command="exec sleep 300", background=True), Turn(text="runs"))
    args = ("--permission-mode", "auto", "--sandbox", "workspace-write")
    async with own_agent(editor, di_code_home, llm_server, *args) as (conn, process):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await prompt(conn, session.session_id, "serve")
        job = editor.terminals["term-1"]
        assert job.process.returncode is None
        process.send_signal(signal.SIGKILL)
        await asyncio.wait_for(process.wait(), TIMEOUT)
    try:
        await asyncio.wait_for(job.process.wait(), 10)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(job.process.pid, signal.SIGKILL)


class Refuses(TerminalClient):
    async def create_terminal(self, session_id: str, command: str, **_: Any) -> Any:
        self.log.append(("create", "refused"))
        raise RequestError.internal_error({"why": "no terminals today\n\x1b[2Jforged"})


async def test_an_editor_that_refuses_the_terminal_leaves_a_one_line_error_and_no_job(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = Refuses(editor_env)
    llm_server.script(
        call("bash", command="exec sleep 300", background=True),
        call("job_list"),
        call("job_output", job_id=1),
        Turn(text="none"),
    )
    conn, session_id = await started(agent, editor, workspace)
    assert (await prompt(conn, session_id, "serve")).stop_reason == "end_turn"
    begun, listed, read = results(llm_server)
    assert "the editor could not start the command" in begun, begun
    assert "\x1b" not in begun
    assert listed == "No background jobs.", listed
    assert "No background job 1" in read


async def test_twenty_terminal_jobs_are_listed_and_all_end_with_the_session(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = TerminalClient(editor_env)
    count = 20
    llm_server.script(
        *(call("bash", command=f"echo job-{n}; exec sleep 300", background=True)
          for n in range(count)),
        call("job_list"),
        Turn(text="twenty"),
    )  # fmt: skip
    conn, session_id = await started(agent, editor, workspace)
    assert (await prompt(conn, session_id, "serve")).stop_reason == "end_turn"
    listed = results(llm_server)[-1].splitlines()
    assert len(listed) == count and all("running (in the editor's terminal" in r for r in listed)
    await asyncio.wait_for(conn.close_session(session_id=session_id), TIMEOUT)
    for terminal_id, terminal in editor.terminals.items():
        assert ("release", terminal_id) in editor.log
        assert terminal.process.returncode is not None
    assert len(editor.terminals) == count


FLOOD = (
    f'{PYTHON} -c "import sys, time\n'
    "line = b'the same line again and again ' * 3 + b'\\n'\n"
    "sys.stdout.buffer.write(line * 100); sys.stdout.flush(); time.sleep(2)\n"
    "while True:\n"
    '    sys.stdout.buffer.write(line * 700); sys.stdout.flush(); time.sleep(0.01)"'
)
"""A job printing the same line: a hundred times, then (after a pause that ends bash's first
read) without end, about 6 MB a second."""


@pytest.mark.xfail(
    strict=True,
    reason="once the editor drops the beginning, output that repeats itself is taken as old: "
    "the megabytes printed after the first look are neither read nor said lost",
)
async def test_output_without_end_in_an_editors_terminal_is_read_or_said_lost(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """README: output the editor dropped before it was asked for is lost, and the read says
    so; a read shows the output new since the last one."""
    editor = TerminalClient(editor_env)
    llm_server.script(
        call("bash", command=FLOOD, background=True),
        call("job_output", job_id=1, wait=3, pattern="never"),
        call("job_kill", job_id=1),
        Turn(text="flooded"),
    )
    conn, session_id = await started(agent, editor, workspace)
    assert (await prompt(conn, session_id, "flood")).stop_reason == "end_turn"
    _, read, killed = results(llm_server)
    assert len(read) < 60_000 and killed.startswith("job 1")
    assert "dropped some of the output" in read, read


# --- names, commands and typed text ---------------------------------------------------

HOSTILE_COMMAND = "echo out; exit 5 # \u202eevil\x1b]0;forged title\x07\x1b[2J"


async def told_end(agent: Any, llm_server: LLMServer, workspace: Path, editor_env: Any) -> str:
    """What the editor is told of a job with HOSTILE_COMMAND, once it has ended."""
    editor = TerminalClient(editor_env)
    llm_server.script(call("bash", command=HOSTILE_COMMAND, background=True), Turn(text="x"))
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "go")
    await logged(editor, ("release", "term-1"))
    for _ in range(TIMEOUT * 20):
        if "exited with code 5" in editor.said():
            break
        await asyncio.sleep(0.05)
    told = editor.said()
    assert "exited with code 5" in told, told
    return told


async def test_escapes_in_a_jobs_command_reach_the_editor_inert(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """The job's end is told to the editor as a note: its command, with a terminal title
    escape and a screen clear, must not carry them raw to the user."""
    told = await told_end(agent, llm_server, workspace, editor_env)
    assert "\x1b" not in told and "\x07" not in told, repr(told)
    assert "\\x1b]0;forged title\\x07" in told, repr(told)


async def test_a_bidi_override_in_a_jobs_command_reaches_the_editor_visibly(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    told = await told_end(agent, llm_server, workspace, editor_env)
    assert "\u202e" not in told, repr(told)


async def test_job_input_to_an_exited_terminal_job_is_a_one_line_refusal(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = TerminalClient(editor_env)
    llm_server.script(
        call("bash", command="echo bye; exit 2", background=True),
        call("job_output", job_id=1, wait=30),
        call("job_input", job_id=1, text="hello\n", eof=True),
        Turn(text="done"),
    )
    conn, session_id = await started(agent, editor, workspace)
    assert (await prompt(conn, session_id, "go")).stop_reason == "end_turn"
    _, read, typed = results(llm_server)
    assert "exited with code 2" in read, read
    assert "exited with code 2: it reads no more input." in typed and "\n" not in typed, typed


async def test_the_key_never_reaches_a_terminal_job_nor_leaves_through_its_output(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """The editor runs the job with the editor's own environment minus the hidden variables:
    the provider key is not in the job's environment; a key the job prints (read from a
    file) is hidden in the note of its end the editor is shown (README, Secrets: every
    channel out; the model's own endpoint is not one)."""
    (workspace / "key.txt").write_text(f"the key: {API_KEY}\n")
    job = (
        'printf "env:%s\\n" "${OPENAI_API_KEY:-unset}"; cat key.txt; '
        "while [ ! -e go ]; do sleep 0.05; done; cat key.txt; exit 1"
    )
    editor = TerminalClient(editor_env)
    llm_server.script(call("bash", command=job, background=True), Turn(text="started"))
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "start it")
    terminal = editor.terminals["term-1"]
    assert API_KEY not in Path(f"/proc/{terminal.process.pid}/environ").read_text("latin-1")
    (workspace / "go").touch()
    await logged(editor, ("release", "term-1"))
    llm_server.script(Turn(text="seen"))
    await prompt(conn, session_id, "and now?")
    [begun] = results(llm_server)
    assert "env:unset" in begun, begun
    told = editor.said()
    assert "exited with code 1" in told and "the key: ***" in told, told
    assert API_KEY not in told


class Answers(TerminalClient):
    """An editor whose user answers each permission question in turn from `answers`."""

    def __init__(self, base_env: dict[str, str], answers: list[str]) -> None:
        super().__init__(base_env)
        self.answers = answers

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, [option.option_id for option in options]))
        choice = self.answers.pop(0)
        if choice not in {option.option_id for option in options}:  # "always" not offered
            choice = "allow_once" if choice.startswith("allow") else "reject_once"
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )


REPL = f"{PYTHON} -i -q"


async def ask_mode(agent: Any, editor: TerminalClient, workspace: Path) -> tuple[Any, str]:
    conn = await agent(
        editor, "--permission-mode", "ask", "--sandbox", "off", capabilities=TERMINAL
    )
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    return conn, session.session_id


async def test_job_input_is_asked_in_the_editor_with_the_text_it_would_type_shown_inert(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """README: in ask mode job_input is asked about with the text it would type. The editor
    shows a question's title (and content): the text must be there, its newline and escape
    written visibly, not only in the raw arguments a user never sees."""
    editor = Answers(editor_env, ["allow_once", "reject_once"])
    typed = "print('ok')\n\x1b[2K\rrm -rf ~\n"
    llm_server.script(
        call("bash", command=REPL, background=True, pty=True),
        call("job_input", job_id=1, text=typed),
        Turn(text="done"),
    )
    conn, session_id = await ask_mode(agent, editor, workspace)
    assert (await prompt(conn, session_id, "go")).stop_reason == "end_turn"
    [_, (question, _)] = editor.asked
    shown = " ".join([question.title or "", str(question.content or "")])
    assert "rm -rf ~" in shown, shown
    assert "\x1b" not in (question.title or "") and "\n" not in (question.title or "")


async def test_allowing_job_input_always_does_not_let_other_text_be_typed_unasked(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """README: job_input is asked about with the text it would type; a line that runs an
    interpreter is granted exactly (only that same line runs unasked again). Typing into a
    Python REPL runs code: "always" for `1+1` must not let `open('pwned', 'w')` in unasked."""
    editor = Answers(editor_env, ["allow_once", "allow_always", "reject_once", "reject_once"])
    llm_server.script(
        call("bash", command=REPL, background=True, pty=True),
        call("job_input", job_id=1, text="1+1\n"),
        call("job_input", job_id=1, text="open('pwned', 'w').close()\n"),
        Turn(text="done"),
    )
    conn, session_id = await ask_mode(agent, editor, workspace)
    assert (await prompt(conn, session_id, "go")).stop_reason == "end_turn"
    assert len(editor.asked) == 3, [q.raw_input for q, _ in editor.asked]
    assert not (workspace / "pwned").exists()


async def test_a_deny_rule_on_job_input_refuses_it_unasked_in_the_editor(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str],
    di_code_home: Path,
) -> None:  # fmt: skip
    """README: a deny rule on job_input refuses it in every mode: the editor's user is never
    asked, and nothing is typed into the REPL."""
    (di_code_home / "config.toml").write_text('[permissions]\ndeny = ["job_input"]\n')
    editor = Answers(editor_env, ["allow_once", "allow_once"])
    llm_server.script(
        call("bash", command=REPL, background=True, pty=True),
        call("job_input", job_id=1, text="open('pwned', 'w').close()\n"),
        Turn(text="done"),
    )
    conn, session_id = await ask_mode(agent, editor, workspace)
    assert (await prompt(conn, session_id, "go")).stop_reason == "end_turn"
    _, refused = results(llm_server)
    assert refused.startswith("Permission denied: a deny rule"), refused
    assert [q.raw_input.get("command") for q, _ in editor.asked] == [REPL]
    assert not (workspace / "pwned").exists()


@pytest.mark.parametrize(
    "shell",
    [
        "bash -",
        "sh -s",
        "bash /dev/stdin",
        "xargs -I{} sh -c {}",
        "cat | sh",
        "nohup bash",
        "timeout 600 dash",
        "busybox sh",
    ],
)
async def test_any_shell_that_would_read_typed_commands_cannot_start_under_a_deny_rule(
    shell: str,
) -> None:
    """README: a job that would read commands from its input, a shell, cannot start while
    any bash deny rule is set; the ways a shell is told to read its stdin are many."""
    gate = gate_of("auto", ["bash:rm"], [])
    refused = await gate.check("bash", {"command": shell, "background": True})
    assert refused is not None and "deny rule" in refused, shell
