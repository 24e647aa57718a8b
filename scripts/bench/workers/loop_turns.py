"""Figure 4 worker: N tool-call turns through the faux provider; per-turn time by transcript size.

The trivial tool stamps the clock each time it runs (once per turn), so the listener-free loop
is timed as it is; turn k starts with 2k+1 messages in the transcript.
"""

import asyncio
import itertools
import json
import statistics
import sys
import time

from di_code.agent import Agent
from di_code.agent.tool import FunctionTool
from di_code.ai import TextContent, ToolCall
from di_code.ai.providers.faux import create_faux_provider
from di_code.ai.types import ToolResultContent


async def main(turns: int, lengths: list[int], window: int) -> dict[str, float]:
    stamps: list[float] = []

    async def tick(_call_id: str, _params: object, _signal: object) -> list[ToolResultContent]:
        stamps.append(time.perf_counter())
        return [TextContent("ok")]

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    tool = FunctionTool("tick", "Returns ok.", schema, tick)
    script = [
        {"type": "success", "content": [ToolCall(f"call_{i}", "tick", {"n": i})]}
        for i in range(turns)
    ]
    script.append({"type": "success", "content": [TextContent("done")]})
    faux = create_faux_provider(script)
    agent = Agent(faux.provider, faux.model, tools=[tool])
    await agent.prompt("go")
    per_turn = [b - a for a, b in itertools.pairwise(stamps)]
    result = {}
    for length in lengths:
        centre = min(max((length - 1) // 2, 0), len(per_turn) - 1)
        lo, hi = max(0, centre - window), min(len(per_turn), centre + window + 1)
        result[str(length)] = statistics.median(per_turn[lo:hi]) * 1000
    result["messages"] = len(agent.transcript)
    return result


if __name__ == "__main__":
    params = json.loads(sys.argv[1])
    print(json.dumps(asyncio.run(main(params["turns"], params["lengths"], params["window"]))))
