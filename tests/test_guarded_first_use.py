"""First-use imports: async code imports the HTTP stack (with the first HTTP client:
di_code.system.http_client), jsonschema, the MCP SDK and the tools' own modules only through
di_code.system.first_use, off the event loop. A real `di-code run` (an HTTP request, a read
tool call, a call whose arguments jsonschema must judge) is watched by an import spy: a guarded
module imported while the loop runs fails here, naming it."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from di_code.tools import default_tools
from di_code.tools.builtin.support.lazy import LazyTool
from tests.cli.conftest import DI_CODE, cli_env
from tests.support.first_use import SPY, guarded, imports, spied_run
from tests.support.llm_server import LLMServer
from tests.support.wire import Replay, ToolCallSpec, Turn, render_openai


def tool_modules(workspace: Path) -> set[str]:
    """The modules of the tools made on first use."""
    return {tool.module for tool in default_tools(workspace) if isinstance(tool, LazyTool)}


def test_a_run_imports_no_guarded_module_on_the_loop(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("read", {"path": "notes.txt"}, "call-1"),)),
        Turn(tool_calls=(ToolCallSpec("read", {"path": 42}, "call-2"),)),
        Turn(text="all read"),
    )
    env = cli_env(di_code_home, llm_server)
    result, lines = spied_run(["run", "read notes.txt"], workspace, env)
    assert result.returncode == 0, result.stderr
    assert "all read" in result.stdout
    assert "path" in str(llm_server.requests[2].body)  # jsonschema's words reached the model
    seen, tools = imports(lines), tool_modules(workspace)
    used = {"httpx", "anyio._backends._asyncio", "jsonschema", "di_code.tools.builtin.read"}
    assert used <= seen.keys()  # the spy saw them: the run went where the test says
    on_loop = [name for name, where in seen.items() if where == "loop" and guarded(name, tools)]
    assert sorted(on_loop) == []


def test_jsonschema_is_imported_off_the_loop_while_a_tool_call_streams(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    """Every tool call's arguments are judged by jsonschema, so it is imported on a helper
    thread as soon as a reply begins a tool call, while the arguments stream in. The model
    here holds the rest of the call until the spy has seen the import (or for 30 s)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    events = render_openai(Turn(tool_calls=(ToolCallSpec("read", {"path": "a.txt"}, "c1"),)))
    reply = tmp_path / "reply.sse"
    reply.write_bytes(b"".join(events))
    begun = len(events[0] + events[1])  # the role, then the call's name: then the hold
    llm_server.script(Replay(str(reply), cuts=(begun,), delay=30))
    log = tmp_path / "imports.log"
    env = {**cli_env(di_code_home, llm_server), "DI_CODE_IMPORT_SPY_LOG": str(log)}
    env["PYTHONPATH"] = os.pathsep.join([str(SPY), env.get("PYTHONPATH", "")])
    run = subprocess.Popen(
        [DI_CODE, "run", "hi"], cwd=workspace, env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while "jsonschema" not in spied(log) and run.poll() is None:
            assert time.monotonic() < deadline, "jsonschema was not imported while waiting"
            time.sleep(0.05)
        assert spied(log).get("jsonschema") == "off"
    finally:
        run.terminate()
        run.wait(30)


def spied(log: Path) -> dict[str, str]:
    return imports(log.read_text(encoding="utf-8").splitlines()) if log.exists() else {}
