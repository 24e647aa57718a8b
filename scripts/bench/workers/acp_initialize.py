"""An editor starting an ACP agent, for figure 13: `python acp_initialize.py COMMAND [ARG...]`
spawns the agent with the ACP SDK's own client, sends `initialize` (the client's fs and
terminal offered, as Zed does) and prints `{"initialize_ms": N}`: spawn to its answer. The
SDK is imported before the clock starts; the agent's stdin is then closed and the SDK waits
for it to end (outside the figure), so the next run starts on a quiet machine."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Any

from acp import PROTOCOL_VERSION
from acp.schema import ClientCapabilities, FileSystemCapabilities
from acp.stdio import spawn_agent_process

CAPABILITIES = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
)


class Editor:
    async def session_update(self, **_: Any) -> None:
        return None


async def main(argv: list[str]) -> int:
    started = time.perf_counter()
    quiet = {"stderr": subprocess.DEVNULL}  # nobody reads it: a full pipe would stop the agent
    spawned = spawn_agent_process(Editor(), *argv, env=dict(os.environ), transport_kwargs=quiet)
    async with spawned as (conn, _process):
        reply = await asyncio.wait_for(
            conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=CAPABILITIES),
            120,
        )
        took = (time.perf_counter() - started) * 1000
    info = reply.agent_info
    print(json.dumps({"initialize_ms": took, "agent": info.name if info else None}))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
