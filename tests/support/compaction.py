"""An agent with a small context window that has had three turns, for the compaction and
request-budget tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec.structs

from di_code.agent import Agent, FunctionTool
from di_code.ai import AbortSignal, TextContent, ToolCall, Usage
from di_code.ai.providers.faux import Faux, create_faux_provider
from di_code.session import (
    Session,
    SessionStore,
    prompt_with_compaction,
)

WINDOW = 40_000


RESERVE = min(16_384, WINDOW // 4)  # the reserve scales down for small windows


THRESHOLD = WINDOW - RESERVE


BIG = "x" * 20_000  # 5000 estimated tokens


SUMMARY = "## Goal\nFix the parser.\n## Next steps\nRun the tests."


async def read_file(call_id: str, params: dict[str, Any], signal: AbortSignal) -> list[Any]:
    return [TextContent(BIG)]


READ = FunctionTool("read", "Read a file", {"type": "object"}, read_file)


def turn(n: int, usage: int = 0) -> list[dict[str, Any]]:
    """One prompt's replies: a read call, then an answer with `usage` input tokens."""
    return [
        {"type": "success", "content": [ToolCall(f"call-{n}", "read", {"path": f"f{n}.py"})]},
        {"type": "success", "content": [TextContent(f"done {n}")], "usage": Usage(input=usage)},
    ]


def answer(text: str) -> dict[str, Any]:
    return {"type": "success", "content": [TextContent(text)]}


async def agent_after_three_turns(last_usage: int, home: Path) -> tuple[Agent, Faux, Session]:
    faux = create_faux_provider([*turn(1), *turn(2), *turn(3, last_usage)])
    model = msgspec.structs.replace(faux.model, context_window=WINDOW)
    agent = Agent(faux.provider, model, [READ])
    session = SessionStore(home).create(home)
    session.record(agent)
    for n in (1, 2, 3):
        await prompt_with_compaction(agent, f"task {n}", session, reserve=RESERVE)
    assert faux.pending_responses() == 0
    return agent, faux, session
