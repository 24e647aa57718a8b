"""An editor that does not implement `terminal/wait_for_exit` (README, "Background jobs", its
ACP paragraph): di-code reads a command's exit from `terminal/output`'s `exitStatus` instead,
for a bash call and for a job, and nothing else ends them. Attacked with an editor whose
`terminal/output` answers wrong types or errors, never answers, or says a running command
exited; a turn stopped and a session closed while the exit is looked for; twenty jobs at
once. Every message di-code sends is checked against the ACP v1 schema (the `agent` fixture)."""

from __future__ import annotations

import asyncio
import itertools
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import RequestError
from acp.schema import TerminalExitStatus, ToolCallStart

from tests.acp.conftest import agent as agent
from tests.acp.conftest import editor_env as editor_env
from tests.acp.conftest import workspace as workspace
from tests.support.acp_editor import TIMEOUT, TerminalClient, prompt
from tests.support.acp_jobs import (
    NoExitWaits,
    SilentOutput,
    call,
    logged,
    mark_of,
    marked,
    none_left,
    results,
    started,
)
from tests.support.llm_server import LLMServer, Turn

WAITS_FOR_GO = "echo waiting; while [ ! -e go ]; do sleep 0.1; done; echo bye; exit 3"
"""A job that runs until the model writes the file `go`, then says so and exits with 3."""


async def test_a_bash_call_returns_its_output_and_exit_code(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = NoExitWaits(editor_env)
    llm_server.script(call("bash", command="sleep 0.3; echo hi; exit 3"), Turn(text="ran"))
    conn, session_id = await started(agent, editor, workspace)
    assert (await prompt(conn, session_id, "run it")).stop_reason == "end_turn"
    [result] = results(llm_server)
    assert "hi" in result and result.endswith("Command exited with code 3"), result
    assert editor.log[-1] == ("release", "term-1")


async def test_esc_during_a_bash_call_ends_the_turn_and_the_command(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = NoExitWaits(editor_env)
    llm_server.script(call("bash", command="exec sleep 300"), Turn(text="unreached"))
    conn, session_id = await started(agent, editor, workspace)
    turn = asyncio.ensure_future(prompt(conn, session_id, "run it"))
    await logged(editor, ("output", "term-1"))  # the exit is looked for: the command runs
    await conn.cancel(session_id=session_id)
    assert (await asyncio.wait_for(turn, TIMEOUT)).stop_reason == "cancelled"
    await logged(editor, ("release", "term-1"))
    await asyncio.wait_for(editor.terminals["term-1"].process.wait(), TIMEOUT)


async def test_a_job_runs_until_its_output_says_it_exited_and_is_told_with_its_code(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = NoExitWaits(editor_env)
    llm_server.script(
        call("bash", command=WAITS_FOR_GO, background=True),
        call("job_list"),
        call("write", path=str(workspace / "go"), content=""),
        call("job_output", job_id=1, wait=30, pattern="^never$"),
        Turn(text="ended"),
    )
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "serve")
    _, listed, _, read = results(llm_server)
    assert "running" in listed, listed
    assert "exited with code 3" in read and "bye" in read, read
    assert "exited with code 3; last lines:\nwaiting\nbye]" in editor.said()
    assert editor.log[-1] == ("release", "term-1")


class RefusedWaits(TerminalClient):
    """`terminal/wait_for_exit` answered with an error other than a missing method, or with
    something that is not ACP's answer."""

    def __init__(self, base_env: dict[str, str], answer: Any) -> None:
        super().__init__(base_env)
        self.answer = answer

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        if isinstance(self.answer, RequestError):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    "answer", [RequestError.internal_error({"why": "busy"}), [1, 2], "exited"], ids=repr
)
async def test_an_exit_wait_answered_wrongly_ends_no_job(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str], answer: Any
) -> None:
    editor = RefusedWaits(editor_env, answer)
    llm_server.script(
        call("bash", command=WAITS_FOR_GO, background=True),
        call("job_list"),
        call("write", path=str(workspace / "go"), content=""),
        call("job_output", job_id=1, wait=30, pattern="^never$"),
        Turn(text="ended"),
    )
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "serve")
    _, listed, _, read = results(llm_server)
    assert "running" in listed, listed
    assert "exited with code 3" in read, read


class GarbledOutput(NoExitWaits):
    """`terminal/output` answered with wrong types, nulls and errors while the command runs;
    rightly once it exited."""

    def __init__(self, base_env: dict[str, str]) -> None:
        super().__init__(base_env)
        self.garbled = 0
        self._answers = itertools.cycle(
            [
                {"output": 5, "truncated": "maybe"},
                {"output": "x", "truncated": False, "exitStatus": "done"},
                None,
                [1, 2],
                {"output": "x" * 10, "truncated": False, "exitStatus": ["exitCode", 0]},
                RequestError.internal_error({"why": "busy"}),
            ]
        )

    async def terminal_output(self, session_id: str, terminal_id: str, **kw: Any) -> Any:
        if self.terminals[terminal_id].process.returncode is not None:
            return await super().terminal_output(session_id, terminal_id, **kw)
        self.garbled += 1
        answer = next(self._answers)
        if isinstance(answer, RequestError):
            raise answer
        return answer


async def test_garbled_output_answers_end_no_job_and_its_real_exit_is_still_told(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = GarbledOutput(editor_env)
    llm_server.script(call("bash", command=WAITS_FOR_GO, background=True), Turn(text="started"))
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "serve")
    for _ in range(TIMEOUT * 20):  # every kind of garbled answer given, to the exit's looks
        if editor.garbled >= 8:
            break
        await asyncio.sleep(0.05)
    llm_server.script(
        call("job_list"),
        call("write", path=str(workspace / "go"), content=""),
        call("job_output", job_id=1, wait=30, pattern="^never$"),
        Turn(text="ended"),
    )
    await prompt(conn, session_id, "and now?")
    listed, _, read = results(llm_server)[-3:]
    assert "running" in listed, listed
    assert "exited with code 3" in read, read


async def test_closing_the_session_while_the_exit_is_looked_for_in_vain_leaves_nothing_running(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = SilentOutput(editor_env)
    llm_server.script(
        call("bash", command="exec sleep 300", background=True),
        Turn(text="started"),
    )
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "serve")
    await logged(editor, ("output", "term-1"))
    mark = mark_of(editor)
    assert marked(mark), "the job was ended though the editor never said it exited"
    await asyncio.wait_for(conn.close_session(session_id=session_id), TIMEOUT)
    await none_left(mark)


class LyingOutput(NoExitWaits):
    """`terminal/output` says every command exited with 0, while it runs."""

    async def terminal_output(self, session_id: str, terminal_id: str, **kw: Any) -> Any:
        answer = await super().terminal_output(session_id, terminal_id, **kw)
        answer.exit_status = answer.exit_status or TerminalExitStatus(exit_code=0)
        return answer


async def test_a_job_said_to_have_exited_while_it_runs_does_not_run_on(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """README: a job is never said to run after it ended; nor to have ended while it runs."""
    editor = LyingOutput(editor_env)
    llm_server.script(
        call("bash", command="echo up; exec sleep 300", background=True),
        call("job_output", job_id=1, wait=30, pattern="^never$"),
        Turn(text="ended"),
    )
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "serve")
    assert "exited with code 0" in results(llm_server)[-1]
    await none_left(mark_of(editor))


async def test_twenty_jobs_each_told_its_own_exit(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = NoExitWaits(editor_env)
    jobs = range(1, 21)
    command = "echo {n}; while [ ! -e go ]; do sleep 0.2; done; exit {n}"
    llm_server.script(
        *(call("bash", command=command.format(n=n), background=True) for n in jobs),
        call("job_list"),
        call("write", path=str(workspace / "go"), content=""),
        Turn(text="they end"),
    )
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "serve")
    assert len(editor.of(ToolCallStart)) == 22
    assert results(llm_server)[-2].count("running") == 20
    for n in jobs:
        await logged(editor, ("release", f"term-{n}"))
    llm_server.script(call("job_list"), Turn(text="listed"))
    await prompt(conn, session_id, "and now?")
    listed = results(llm_server)[-1]
    for n in jobs:
        assert re.search(rf"job {n} \(`echo {n};.*`\): exited with code {n}\b", listed), listed
