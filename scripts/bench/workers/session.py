"""Figure 8 worker. `make`: write a synthetic session. `resume`: time loading it and rebuilding
the agent's context. `turns`: chat's parts in one process (Agent on the faux provider, the
session recorder, the Rich event Renderer drawing to a fake terminal) for N prompts; peak RSS.
"""

import asyncio
import io
import json
import sys
import time
from pathlib import Path
from typing import Any


def peak_mib() -> float:
    """This process's peak RSS (VmHWM restarts at exec, unlike ru_maxrss)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def make(home: str, cwd: str, messages: int) -> dict[str, Any]:
    from scripts.synthetic_session import make_session_file

    path = make_session_file(Path(home), Path(cwd), messages)
    return {"path": str(path), "bytes": path.stat().st_size}


def resume(home: str, cwd: str) -> dict[str, Any]:
    start = time.perf_counter()
    from di_code.agent import Agent
    from di_code.ai.providers.faux import create_faux_provider
    from di_code.ai.transcript import messages_for_request
    from di_code.session import SessionStore

    imported = time.perf_counter()
    session = SessionStore(Path(home)).latest(Path(cwd))
    assert session is not None, "no session to resume"
    messages = session.context()
    faux = create_faux_provider()
    agent = Agent(faux.provider, faux.model, messages=messages)
    request = messages_for_request(agent.transcript, 0)
    done = time.perf_counter()
    return {
        "seconds": done - imported,
        "with_imports": done - start,
        "messages": len(request),
        "peak_mib": peak_mib(),
    }


async def turns(home: str, cwd: str, count: int) -> dict[str, Any]:
    from rich.console import Console

    from di_code.agent import Agent
    from di_code.ai import TextContent
    from di_code.ai.providers.faux import create_faux_provider
    from di_code.session import SessionStore
    from di_code.ui.render import Renderer

    class Terminal(io.StringIO):
        def write(self, text: str) -> int:
            return len(text)

        def isatty(self) -> bool:
            return True

    console = Console(file=Terminal(), force_terminal=True, width=100, height=40)
    faux = create_faux_provider()
    agent = Agent(faux.provider, faux.model)
    agent.subscribe(Renderer(console, model=faux.model).handle)
    SessionStore(Path(home)).create(Path(cwd)).record(agent)
    reply = "Here is **the answer**, with a list:\n\n- one\n- two\n\n```py\nx = 1\n```\n"
    for i in range(count):
        faux.push({"type": "success", "content": [TextContent(f"{reply} (turn {i})")]})
        await agent.prompt(f"question {i}: what changed?")
    return {"peak_mib": peak_mib(), "messages": len(agent.transcript)}


if __name__ == "__main__":
    p = json.loads(sys.argv[1])
    if p["mode"] == "make":
        print(json.dumps(make(p["home"], p["cwd"], p["messages"])))
    elif p["mode"] == "resume":
        print(json.dumps(resume(p["home"], p["cwd"])))
    else:
        print(json.dumps(asyncio.run(turns(p["home"], p["cwd"], p["turns"]))))
