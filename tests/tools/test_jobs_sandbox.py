"""Background jobs in the sandbox: the commands of one session share one network namespace,
so a server a job started is reached by a later bash call on loopback, while neither reaches
the host's network (its listeners on 127.0.0.1 included), and a job is still killed whole."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from di_code.system.children import group_members
from di_code.tools import default_tools
from di_code.tools.builtin.support.bash_policy import BashPolicy
from di_code.tools.process.sandbox import SandboxChoice
from tests.support.bubblewrap import needs_bubblewrap
from tests.support.jobs import start_web_server
from tests.support.processes import alive
from tests.tools.conftest import run, text_of

PYTHON = os.path.realpath(sys.executable)
"""The interpreter itself, not a venv's link to it: a checkout under /tmp (as CI's) is hidden
by the sandbox's private /tmp, the interpreter's own folder is not."""

pytestmark = needs_bubblewrap


@pytest.fixture
def host_listener() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    yield server
    server.close()


def sandboxed_tools(workspace: Path) -> tuple[BashPolicy, dict[str, Any]]:
    policy = BashPolicy(SandboxChoice("workspace-write"))
    return policy, {tool.name: tool for tool in default_tools(workspace, bash=policy)}


def fetch(port: int) -> str:
    return (
        f'{PYTHON} -c "import urllib.request as u; '
        f"print(u.urlopen('http://127.0.0.1:{port}/', timeout=10).status)\""
    )


async def test_a_sandboxed_server_job_is_reached_by_a_later_sandboxed_command(
    workspace: Path, host_listener: socket.socket
) -> None:
    policy, tools = sandboxed_tools(workspace)
    job, port = await start_web_server(tools)
    fetched = await run(tools["bash"], {"command": fetch(port)})
    assert text_of(fetched).strip() == "200", text_of(fetched)
    with socket.socket() as probe:  # the host does not see the sandbox's loopback
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    host = host_listener.getsockname()[1]
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{host} && echo connected"
    refused = await run(tools["bash"], {"command": connect})
    assert refused.is_error and "connected" not in text_of(refused)
    outside = await run(tools["bash"], {"command": "exec 3<>/dev/tcp/1.1.1.1/80 && echo out"})
    assert outside.is_error and "out" not in text_of(outside)
    members = group_members(policy.jobs.jobs[job].pid)
    await run(tools["job_kill"], {"job_id": job})
    assert not [pid for pid in members if alive(pid)]
    again = await run(tools["bash"], {"command": fetch(port)})
    assert again.is_error  # the server is gone with its job


async def test_the_shared_namespace_gives_a_command_no_more_rights(workspace: Path) -> None:
    """Entering the session's namespace (where an unprivileged user is root, as bubblewrap
    made it) leaves a command the user's ids and capabilities, as a sandbox with a network of
    its own has them."""
    rights = "id -u; id -g; grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status"
    _, shared = sandboxed_tools(workspace)
    own = BashPolicy(SandboxChoice("workspace-write", network=True))
    alone = {tool.name: tool for tool in default_tools(workspace, bash=own)}
    inside = text_of(await run(shared["bash"], {"command": rights}))
    assert inside == text_of(await run(alone["bash"], {"command": rights}))
    assert inside.splitlines()[0] == str(os.getuid())
