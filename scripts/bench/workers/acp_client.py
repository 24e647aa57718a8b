"""A headless editor for figure 12: `python scripts/bench/workers/acp_client.py DI_CODE PROMPT`
starts `DI_CODE acp` with the ACP SDK's own client, opens a session in the current folder
(auto mode, so no question is asked), sends PROMPT, prints the answer and exits. It prints
`initialize: N ms` on stderr: spawn to the answer of `initialize`."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

from acp import PROTOCOL_VERSION, text_block
from acp.schema import AgentMessageChunk
from acp.stdio import spawn_agent_process


class Editor:
    def __init__(self) -> None:
        self.answer: list[str] = []

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        if isinstance(update, AgentMessageChunk):
            self.answer.append(update.content.text)

    async def request_permission(self, **_: Any) -> Any:
        raise RuntimeError("auto mode asks nothing")


async def main(command: str, prompt: str) -> int:
    editor = Editor()
    started = time.perf_counter()
    args = ("acp", "--permission-mode", "auto", "--sandbox", "off")
    async with spawn_agent_process(editor, command, *args, env=dict(os.environ)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        print(f"initialize: {(time.perf_counter() - started) * 1000:.0f} ms", file=sys.stderr)
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        reply = await conn.prompt(session_id=session.session_id, prompt=[text_block(prompt)])
    print("".join(editor.answer))
    return 0 if reply.stop_reason == "end_turn" else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))
