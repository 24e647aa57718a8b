"""An Agent's messages are recorded as they end, and a resumed session gives them back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from di_code.agent import Agent, FunctionTool
from di_code.ai import AbortSignal, TextContent, ToolCall
from di_code.ai.providers.faux import create_faux_provider
from di_code.session import Session, SessionError, SessionHeader, SessionStore


async def echo(call_id: str, params: dict[str, Any], signal: AbortSignal) -> list[Any]:
    return [TextContent("echoed")]


async def test_record_then_resume(tmp_path: Path) -> None:
    faux = create_faux_provider(
        [
            {"type": "success", "content": [ToolCall("c1", "echo", {"v": 1})]},
            {"type": "success", "content": [TextContent("done")]},
            {"type": "success", "content": [TextContent("again")]},
        ]
    )
    tool = FunctionTool("echo", "Echo", {"type": "object"}, echo)
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    agent = Agent(faux.provider, faux.model, [tool])
    stop = session.record(agent)
    seen_on_disk: list[int] = []

    def count_lines(event: Any) -> None:
        if event.type == "message_end":  # the session's listener ran first
            seen_on_disk.append(len(session.path.read_text().splitlines()))

    agent.subscribe(count_lines)
    await agent.prompt("go")
    stop()
    types = [json.loads(line)["type"] for line in session.path.read_text().splitlines()]
    assert types == ["session", "message", "model_change", "message", "message", "message"]
    assert seen_on_disk == [2, 4, 5, 6]  # each message on disk when its message_end is seen

    session.release()  # the first writer ends
    resumed = store.latest(tmp_path)
    assert resumed is not None and resumed.id == session.id
    assert resumed.context() == agent.transcript and resumed.model() == ("faux", "faux-1")
    again = Agent(faux.provider, faux.model, [tool], messages=resumed.context())
    resumed.record(again)
    await again.prompt("more")
    assert faux.requests[-1].messages[:4] == agent.transcript
    assert store.open(session.path, tmp_path, write=False).context() == again.transcript


async def test_nothing_recorded_leaves_no_file(tmp_path: Path) -> None:
    session = SessionStore(tmp_path).create(tmp_path)
    faux = create_faux_provider()
    session.record(Agent(faux.provider, faux.model))
    assert not session.path.exists() and SessionStore(tmp_path).latest(tmp_path) is None


async def test_a_failed_write_is_reported_and_the_conversation_goes_on(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    session = Session(blocker / "s.jsonl", SessionHeader("s1", str(tmp_path), 0))
    faux = create_faux_provider([{"type": "success", "content": [TextContent("hi")]}])
    agent = Agent(faux.provider, faux.model)
    errors: list[SessionError] = []
    session.record(agent, on_error=errors.append)
    final = await agent.prompt("go")
    assert final.text == "hi"
    assert errors and str(errors[0]).startswith("cannot write session s1:")
    assert "\n" not in str(errors[0])
