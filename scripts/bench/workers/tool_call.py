"""Figure 6 worker: one call of a di-code tool, as the agent loop makes it (arguments validated).

Reports the call's wall time, the process's peak memory before and after (ru_maxrss), and a
digest of the result; a bash spill file is removed once its size is known. The tool's code is
loaded before the clock starts: the agent loads it at a session's first call of the tool
(LazyTool), once, and the figure is about the call's own work.
"""

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from di_code.ai import AbortController, validate_tool_arguments
from di_code.tools import default_tools


def peak_mib() -> float:
    """This process's peak RSS (VmHWM restarts at exec, unlike ru_maxrss)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


async def main(workspace: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    tool = next(t for t in default_tools(Path(workspace)) if t.name == name)
    getattr(tool, "tool", None)  # a LazyTool builds its real tool now
    params = validate_tool_arguments(tool, arguments)
    before = peak_mib()
    start = time.perf_counter()
    result = await tool.execute("call_1", params, AbortController().signal)
    seconds = time.perf_counter() - start
    content = result.content if hasattr(result, "content") else result
    text = "".join(getattr(block, "text", "") for block in content)
    details = getattr(result, "details", None) or {}
    spill = details.get("full_output_path") if isinstance(details, dict) else None
    spilled = 0
    if spill and os.path.exists(spill):
        spilled = os.path.getsize(spill)
        os.unlink(spill)
    return {
        "seconds": seconds,
        "peak_before_mib": before,
        "peak_mib": peak_mib(),
        "text_head": text[:200],
        "text_len": len(text),
        "spilled_bytes": spilled,
        "is_error": bool(getattr(result, "is_error", False)),
    }


if __name__ == "__main__":
    p = json.loads(sys.argv[1])
    print(json.dumps(asyncio.run(main(p["workspace"], p["tool"], p["arguments"]))))
