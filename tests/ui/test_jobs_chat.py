"""Background jobs in the chat: the bottom line counts them, /jobs lists and kills them, a job
that ends on its own is said once to the user (when it ends) and once to the model (with its
next request)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from di_code.ai import ToolCall
from tests.support.jobs import background, prepared
from tests.support.processes import alive
from tests.support.repl import chat, text_reply, until, user_texts

ENDING = "echo last-words; until [ -e go ]; do sleep 0.05; done;"
"""A job that ends once the test says so (by making the file `go`)."""


async def test_jobs_are_on_the_bottom_line_listed_and_killed(tmp_path: Path) -> None:
    setup, _ = prepared(tmp_path, [background("echo serving; sleep 100"), text_reply("Started.")])
    assert setup.jobs is not None
    async with chat(setup) as session:
        session.type("start it\r")
        await session.answered()
        assert session.repl.status_line().endswith(" · jobs: 1 running")
        pid = setup.jobs.running()[0].pid  # type: ignore[attr-defined]
        session.type("/jobs\r")
        await until(lambda: "(/jobs kill N stops one)" in session.output)
        assert "job 1 (`echo serving; sleep 100`): running" in session.output
        assert "    serving\n" in session.output
        session.type("/jobs kill 1\r")
        await until(lambda: "job 1 (`echo serving; sleep 100`): killed" in session.output)
        assert not alive(pid)
        assert "jobs:" not in session.repl.status_line()
        session.type("/exit\r")


async def test_a_job_that_ends_is_said_once_to_the_user_and_to_the_model(tmp_path: Path) -> None:
    setup, faux = prepared(
        tmp_path,
        [background(f"{ENDING} exit 2"), text_reply("Started."), text_reply("Seen.")],
    )
    async with chat(setup) as session:
        session.type("start it\r")
        await session.answered()
        (tmp_path / "go").touch()
        await until(lambda: "exited with code 2" in session.output)
        session.type("and now?\r")
        await session.answered()
        session.type("/exit\r")
    told = [text for text in user_texts(faux, 2) if "exited with code 2" in text]  # type: ignore[arg-type]
    assert len(told) == 1 and "last-words" in told[0]
    assert told[0].startswith(f"[Background job 1 (`{ENDING} exit 2`)")
    assert session.output.count("exited with code 2") == 1, session.output
    assert user_texts(faux, 2)[-1] == "and now?"  # type: ignore[arg-type]


async def test_esc_ends_the_turn_not_the_job(tmp_path: Path) -> None:
    wait = ToolCall("c2", "job_output", {"job_id": 1, "wait": 600, "pattern": "never"})
    setup, _ = prepared(
        tmp_path,
        [background("sleep 100"), text_reply("Started."), {"type": "success", "content": [wait]}],
    )
    assert setup.jobs is not None
    waiting = asyncio.Event()
    setup.agent.subscribe(
        lambda event: waiting.set() if event.type == "tool_execution_start" else None
    )
    async with chat(setup) as session:
        session.type("start it\r")
        await session.answered()
        waiting.clear()
        session.type("wait for it\r")
        await asyncio.wait_for(waiting.wait(), 30)
        session.type("\x1b")
        end = await session.answered()
        assert end.messages[-1].stop_reason == "aborted"  # type: ignore[union-attr]
        [job] = setup.jobs.running()
        assert alive(job.pid)  # type: ignore[attr-defined]
        assert session.repl.status_line().endswith(" · jobs: 1 running")
        await setup.jobs.stop_all()  # no child outlives the test's event loop
        session.type("/exit\r")
