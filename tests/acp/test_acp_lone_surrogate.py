"""A lone surrogate (`\\ud800`) in an editor's message is made U+FFFD where the line is read:
the prompt reaches the model and the session file as valid text, and the next prompt works
(it used to fail with `'utf-8' codec can't encode`, that prompt and every later one)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import PROTOCOL_VERSION  # noqa: E402

from tests.cli.conftest import request_text  # noqa: E402
from tests.support.acp_editor import TIMEOUT, raw_acp  # noqa: E402
from tests.support.llm_server import LLMServer, Turn  # noqa: E402


async def answer(process: asyncio.subprocess.Process, request_id: int) -> Any:
    assert process.stdout is not None
    while True:
        message = json.loads(await asyncio.wait_for(process.stdout.readline(), TIMEOUT))
        if message.get("id") == request_id and "method" not in message:
            return message


def send(process: asyncio.subprocess.Process, request_id: int, method: str, params: str) -> None:
    assert process.stdin is not None
    line = f'{{"jsonrpc":"2.0","id":{request_id},"method":"{method}","params":{params}}}\n'
    process.stdin.write(line.encode())


async def test_a_lone_surrogate_in_a_prompt_does_not_poison_the_session(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(text="one"), Turn(text="two"))
    process = await raw_acp(di_code_home, llm_server, workspace)
    send(process, 0, "initialize", json.dumps({"protocolVersion": PROTOCOL_VERSION}))
    await answer(process, 0)
    send(process, 1, "session/new", json.dumps({"cwd": str(workspace), "mcpServers": []}))
    session_id = (await answer(process, 1))["result"]["sessionId"]
    for number, text in ((2, "bad \\ud800 here \\ud83d\\ude00"), (3, "next")):
        params = f'{{"sessionId":"{session_id}","prompt":[{{"type":"text","text":"{text}"}}]}}'
        send(process, number, "session/prompt", params)
        reply = await answer(process, number)
        assert reply.get("result", {}).get("stopReason") == "end_turn", reply
    first = request_text(llm_server.requests[0].body)
    assert "bad \ufffd here \U0001f600" in first
    assert "bad \ufffd here" in request_text(llm_server.requests[1].body)
    (session,) = di_code_home.glob("sessions/*/*.jsonl")
    stored = session.read_text(encoding="utf-8")
    assert "bad \ufffd here \U0001f600" in stored
    assert process.stdin is not None
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
