"""Stops under an editor that cannot say a command exited (README, "Editors (ACP)", terminals
through the editor, and "Background jobs", its ACP paragraph): no `terminal/wait_for_exit`, and
a `terminal/output` that is never answered. A bash call is still "stopped at its timeout",
"Cancel kills the terminal" and ends the turn, and job_kill holds up for at most its bound:
none of them may wait for an answer the editor never gives. And an editor that answers far
more output than it was asked to keep widens nothing the model is shown."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from tests.acp.conftest import agent as agent
from tests.acp.conftest import editor_env as editor_env
from tests.acp.conftest import workspace as workspace
from tests.support.acp_editor import TIMEOUT, prompt
from tests.support.acp_jobs import (
    DeafToKills,
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


async def test_a_bash_call_stops_at_its_timeout_though_its_output_is_never_answered(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = SilentOutput(editor_env)
    llm_server.script(call("bash", command="exec sleep 300", timeout=1), Turn(text="went on"))
    conn, session_id = await started(agent, editor, workspace)
    reply = await asyncio.wait_for(prompt(conn, session_id, "run it"), TIMEOUT)
    assert reply.stop_reason == "end_turn"
    [result] = results(llm_server)
    assert "timed out after 1 seconds" in result, result
    assert ("kill", "term-1") in editor.log
    await asyncio.wait_for(editor.terminals["term-1"].process.wait(), TIMEOUT)


async def test_cancel_ends_a_bash_call_whose_output_is_never_answered(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = SilentOutput(editor_env)
    llm_server.script(call("bash", command="exec sleep 300"), Turn(text="unreached"))
    conn, session_id = await started(agent, editor, workspace)
    turn = asyncio.ensure_future(prompt(conn, session_id, "run it"))
    await logged(editor, ("output", "term-1"))
    await conn.cancel(session_id=session_id)
    assert (await asyncio.wait_for(turn, TIMEOUT)).stop_reason == "cancelled"
    await asyncio.wait_for(editor.terminals["term-1"].process.wait(), TIMEOUT)


async def test_job_kill_ends_a_job_whose_output_is_never_answered(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = SilentOutput(editor_env)
    llm_server.script(
        call("bash", command="exec sleep 300", background=True),
        call("job_kill", job_id=1),
        Turn(text="killed"),
    )
    conn, session_id = await started(agent, editor, workspace)
    reply = await asyncio.wait_for(prompt(conn, session_id, "serve, then stop"), TIMEOUT)
    assert reply.stop_reason == "end_turn"
    assert ("kill", "term-1") in editor.log
    await none_left(mark_of(editor))


class DeafWithoutExitWaits(DeafToKills, NoExitWaits):
    """No `terminal/wait_for_exit`, and a kill or a release never answered (nor done)."""


async def test_a_bash_call_stops_at_its_timeout_though_the_kill_is_never_answered(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    llm_server.script(call("bash", command="exec sleep 300", timeout=1), Turn(text="went on"))
    async with deaf_editor(agent, editor_env, workspace) as (editor, conn, session_id):
        reply = await asyncio.wait_for(prompt(conn, session_id, "run it"), TIMEOUT)
        assert reply.stop_reason == "end_turn"
        [result] = results(llm_server)
        assert "timed out after 1 seconds" in result, result
        assert ("kill", "term-1") in editor.log


async def test_cancel_ends_a_bash_call_whose_kill_and_release_are_never_answered(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    llm_server.script(call("bash", command="exec sleep 300"), Turn(text="unreached"))
    async with deaf_editor(agent, editor_env, workspace) as (editor, conn, session_id):
        turn = asyncio.ensure_future(prompt(conn, session_id, "run it"))
        await logged(editor, ("output", "term-1"))
        await conn.cancel(session_id=session_id)
        assert (await asyncio.wait_for(turn, TIMEOUT)).stop_reason == "cancelled"


async def test_closing_the_session_during_a_bash_call_whose_output_is_never_answered(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = SilentOutput(editor_env)
    llm_server.script(call("bash", command="exec sleep 300"), Turn(text="unreached"))
    conn, session_id = await started(agent, editor, workspace)
    turn = asyncio.ensure_future(prompt(conn, session_id, "run it"))
    await logged(editor, ("output", "term-1"))
    await asyncio.wait_for(conn.close_session(session_id=session_id), TIMEOUT)
    await asyncio.wait_for(editor.terminals["term-1"].process.wait(), TIMEOUT)
    await asyncio.wait_for(asyncio.gather(turn, return_exceptions=True), TIMEOUT)


async def test_a_job_runs_on_when_a_later_bash_call_is_cancelled(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """README: a job lives across turns; a cancel kills the cancelled call's terminal (and
    makes every exit look at once), never the job's."""
    editor = NoExitWaits(editor_env)
    llm_server.script(call("bash", command="exec sleep 300", background=True), Turn(text="started"))
    conn, session_id = await started(agent, editor, workspace)
    await prompt(conn, session_id, "serve")
    llm_server.script(call("bash", command="exec sleep 300"))
    turn = asyncio.ensure_future(prompt(conn, session_id, "run it"))
    await logged(editor, ("output", "term-2"))
    await conn.cancel(session_id=session_id)
    assert (await asyncio.wait_for(turn, TIMEOUT)).stop_reason == "cancelled"
    await logged(editor, ("release", "term-2"))
    llm_server.script(call("job_list"), Turn(text="listed"))
    await prompt(conn, session_id, "and now?")
    assert "running" in results(llm_server)[-1], results(llm_server)[-1]
    mark = mark_of(editor)
    assert marked(mark), "the job was ended with another call's cancel"
    assert ("kill", "term-1") not in editor.log
    await asyncio.wait_for(conn.close_session(session_id=session_id), TIMEOUT)
    await none_left(mark)


class HugeOutput(NoExitWaits):
    """`terminal/output` answers 8 MB of lines, over the 1 MB di-code asked it to keep."""

    async def terminal_output(self, session_id: str, terminal_id: str, **kw: Any) -> Any:
        answer = await super().terminal_output(session_id, terminal_id, **kw)
        answer.output = "".join(f"line {n}\n" for n in range(800_000)) + answer.output
        return answer


async def test_an_editor_answering_more_output_than_asked_shows_the_model_only_its_end(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """README: the model is shown the last 2000 lines or 50 KB, the rest in the full-output
    file; an editor that keeps more than the 1 MB asked for does not widen that."""
    editor = HugeOutput(editor_env)
    llm_server.script(call("bash", command="sleep 0.2; echo the end"), Turn(text="read"))
    conn, session_id = await started(agent, editor, workspace)
    assert (await prompt(conn, session_id, "run it")).stop_reason == "end_turn"
    [result] = results(llm_server)
    assert "the end" in result, result[-500:]
    assert len(result.encode()) < 60_000
    assert "Full output:" in result


async def test_closing_the_session_during_a_bash_call_the_editor_never_kills_nor_releases(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    editor = DeafWithoutExitWaits(editor_env)
    llm_server.script(call("bash", command="exec sleep 300"))
    conn, session_id = await started(agent, editor, workspace)
    try:
        turn = asyncio.ensure_future(prompt(conn, session_id, "run it"))
        await logged(editor, ("output", "term-1"))
        await asyncio.wait_for(conn.close_session(session_id=session_id), TIMEOUT)
        await asyncio.wait_for(asyncio.gather(turn, return_exceptions=True), TIMEOUT)
    finally:  # the editor kills nothing: the test does
        with contextlib.suppress(ProcessLookupError):
            os.killpg(editor.terminals["term-1"].process.pid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def deaf_editor(
    agent: Any, editor_env: dict[str, str], workspace: Path
) -> AsyncIterator[tuple[DeafWithoutExitWaits, Any, str]]:
    """A session under a DeafWithoutExitWaits editor; its first terminal killed at the end
    (the editor kills nothing: the test does)."""
    editor = DeafWithoutExitWaits(editor_env)
    conn, session_id = await started(agent, editor, workspace)
    try:
        yield editor, conn, session_id
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(editor.terminals["term-1"].process.pid, signal.SIGKILL)
