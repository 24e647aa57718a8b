"""Background jobs of the bash tool, started by the tests and by a chat."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from di_code.agent import Agent
from di_code.ai import ToolCall
from di_code.ai.providers.faux import create_faux_provider
from di_code.setup.prepared import Prepared
from di_code.tools import default_tools
from di_code.tools.builtin.support.bash_policy import BashPolicy
from di_code.tools.builtin.support.job_history import job_notices
from tests.support.local_port import free_port
from tests.tools.conftest import run, text_of


async def start(tools: dict[str, Any], command: str, **more: Any) -> int:
    result = await run(tools["bash"], {"command": command, "background": True, **more})
    assert not result.is_error, text_of(result)
    job_id = result.details["job_id"]
    assert isinstance(job_id, int)
    assert f"job_output(job_id={job_id})" in text_of(result)
    return job_id


async def start_web_server(tools: dict[str, Any]) -> tuple[int, int]:
    """A `python -m http.server` job on a free loopback port, once it says it serves: its job
    id and port. The interpreter by its real path, which a sandbox can run as well."""
    port = free_port()
    python = os.path.realpath(sys.executable)
    job = await start(tools, f"{python} -u -m http.server {port} --bind 127.0.0.1")
    waited = await run(tools["job_output"], {"job_id": job, "wait": 30, "pattern": "Serving HTTP"})
    assert "Pattern seen" in text_of(waited), text_of(waited)
    return job, port


def resident_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def background(command: str) -> dict[str, object]:
    call = ToolCall("c1", "bash", {"command": command, "run_in_background": True})
    return {"type": "success", "content": [call]}


def prepared(workspace: Path, responses: list[dict[str, object]]) -> tuple[Prepared, object]:
    faux = create_faux_provider(responses)
    policy = BashPolicy()
    agent = Agent(faux.provider, faux.model, default_tools(workspace, bash=policy))
    agent.notices = job_notices(policy.jobs, [], print)
    return Prepared(agent, jobs=policy.jobs), faux
