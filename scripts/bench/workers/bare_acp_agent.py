"""The least an ACP agent on the Python SDK can be, for figure 13's floor: it answers
`initialize` and nothing else. `di-code acp` can answer no sooner than this, whatever it does
before: the difference between the two is di-code's own share."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from acp import PROTOCOL_VERSION, Agent, run_agent
from acp.schema import AgentCapabilities, InitializeResponse


class BareAgent:
    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(),
        )


if __name__ == "__main__":
    asyncio.run(run_agent(cast(Agent, BareAgent())))
