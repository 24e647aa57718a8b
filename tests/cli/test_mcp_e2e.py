"""MCP servers through `di-code run`: a real stdio server and a real streamable-HTTP server,
written with the official SDK (tests/support/mcp_fixture_server.py), a scripted model."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import DI_CODE, RunDiCode, cli_env, request_text
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.mcp_config import markers as markers
from tests.support.mcp_config import stdio_server, toml_table
from tests.support.mcp_fixture_server import NAME_TWINS, serving_http
from tests.support.processes import MARK, alive, marked, wait_until

TIMEOUT = 30


@pytest.fixture
def http_server(markers: Path) -> Iterator[str]:
    with serving_http(markers) as url:
        yield url


def test_stdio_and_http_servers_tools_reach_the_model(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    di_code_home: Path,
    markers: Path,
    http_server: str,
) -> None:
    config = toml_table("fx", stdio_server("fx", markers))
    config += toml_table("web", {"url": http_server})
    (di_code_home / "config.toml").write_text(config)
    llm_server.script(
        call("mcp__fx__add", {"a": 2, "b": 40}, "c1"),
        call("mcp__fx__picture", {}, "c2"),
        call("mcp__fx__explode", {"reason": "on purpose"}, "c3"),
        call("mcp__web__add", {"a": 1, "b": 1}, "c4"),
        Turn(text="all done"),
    )
    done = run_di_code("run", "--yes", "use the tools")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "all done\n"
    bodies = [r.body for r in llm_server.requests if r.method == "POST"]
    offered = {tool["function"]["name"] for tool in bodies[0]["tools"]}
    assert {"mcp__fx__add", "mcp__fx__picture", "mcp__web__add"} <= offered
    add = next(t for t in bodies[0]["tools"] if t["function"]["name"] == "mcp__fx__add")
    assert add["function"]["parameters"]["required"] == ["a", "b"]
    assert _tool_result(bodies[1], "c1") == "42"
    assert "image" in request_text(bodies[2])  # the PNG went to the model
    assert "exploded: on purpose" in request_text(bodies[3])
    assert _tool_result(bodies[4], "c4") == "2"
    pid = int((markers / "fx.pid").read_text())
    wait_until(lambda: not alive(pid), "the stdio MCP server to end with di-code")


def test_tools_whose_names_collide_once_made_to_fit_each_stay_reachable(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    (di_code_home / "config.toml").write_text(toml_table("fx", stdio_server("fx", markers)))
    llm_server.script(Turn(text="looked"))
    assert run_di_code("run", "look").returncode == 0
    offered = [tool["function"] for tool in llm_server.requests[-1].body["tools"]]
    names = [tool["name"] for tool in offered]
    assert len(names) == len(set(names))
    # what all four wire APIs accept: OpenAI (both), Anthropic, and Gemini's letter-or-_ first
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,63}", name) for name in names)
    twins = {
        tool["description"].removeprefix("Answers ").removesuffix("."): tool["name"]
        for tool in offered
        if tool["description"].startswith("Answers ")
    }
    assert set(twins) == set(NAME_TWINS.values())
    assert twins["plain notes"] == "mcp__fx__notes_read"  # a name that fits stays as it is

    llm_server.script(*[call(name, {}, f"c{i}") for i, name in enumerate(twins.values())])
    llm_server.script(Turn(text="all answered"))
    done = run_di_code("run", "--yes", "call each")
    assert done.returncode == 0, done.stderr
    bodies = [r.body for r in llm_server.requests if r.method == "POST"][-(len(twins) + 1) :]
    assert [tool["function"]["name"] for tool in bodies[0]["tools"]] == names  # stable names
    for i, answer in enumerate(twins):
        assert _tool_result(bodies[i + 1], f"c{i}") == answer


def _tool_result(body: dict[str, object], call_id: str) -> object:
    messages = body["messages"]
    assert isinstance(messages, list)
    found = [m for m in messages if m.get("role") == "tool" and m.get("tool_call_id") == call_id]
    assert found, f"no result for {call_id}"
    return found[0]["content"]


def test_invalid_arguments_are_refused_before_the_server(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    (di_code_home / "config.toml").write_text(toml_table("fx", stdio_server("fx", markers)))
    llm_server.script(call("mcp__fx__add", {"a": "two", "b": 1}, "c1"), Turn(text="ok"))
    done = run_di_code("run", "--yes", "add")
    assert done.returncode == 0, done.stderr
    sent = request_text(llm_server.requests[-1].body)
    assert 'Invalid arguments for tool \\"mcp__fx__add\\"' in sent


def test_a_server_that_fails_to_start_is_one_warning(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    config = toml_table("broken", {"command": "/nonexistent/mcp-server", "timeout": 5})
    config += toml_table("fx", stdio_server("fx", markers))
    (di_code_home / "config.toml").write_text(config)
    llm_server.script(call("mcp__fx__add", {"a": 1, "b": 2}, "c1"), Turn(text="fine"))
    done = run_di_code("run", "--yes", "go on")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
    warnings = [line for line in done.stderr.splitlines() if "broken" in line]
    assert len(warnings) == 1 and "failed to start" in warnings[0]
    assert "Traceback" not in done.stderr


def test_ctrl_c_during_a_call_stops_the_server(
    llm_server: LLMServer, di_code_home: Path, markers: Path, workspace: Path
) -> None:
    (di_code_home / "config.toml").write_text(toml_table("fx", stdio_server("fx", markers)))
    llm_server.script(call("mcp__fx__slow", {"seconds": 100}, "c1"))
    process = subprocess.Popen(
        [DI_CODE, "run", "--yes", "sleep"],
        cwd=workspace,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (markers / "fx.slow").exists():
            assert time.monotonic() < deadline, "the slow tool never started"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    pid = int((markers / "fx.pid").read_text())
    wait_until(lambda: not alive(pid), "the stdio MCP server to end with di-code")


def test_an_untrusted_projects_mcp_json_starts_nothing(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, markers: Path
) -> None:
    (workspace / ".git").mkdir()
    servers = {"mcpServers": {"fx": stdio_server("fx", markers)}}
    (workspace / ".mcp.json").write_text(json.dumps(servers))
    llm_server.script(Turn(text="hi"), Turn(text="hi again"))
    done = run_di_code("run", "hello")
    assert done.returncode == 0, done.stderr
    assert "trust" in done.stderr
    assert not (markers / "fx.pid").exists()
    assert "mcp__fx" not in request_text(llm_server.requests[-1].body)

    trusted = run_di_code("trust")
    assert trusted.returncode == 0, trusted.stderr
    assert run_di_code("run", "hello").returncode == 0
    assert (markers / "fx.pid").exists()
    assert "mcp__fx__add" in request_text(llm_server.requests[-1].body)


def test_mcp_list_prints_servers_and_tools(
    run_di_code: RunDiCode, di_code_home: Path, markers: Path
) -> None:
    config = toml_table("fx", stdio_server("fx", markers))
    config += toml_table("off", {"command": "true", "enabled": False})
    (di_code_home / "config.toml").write_text(config)
    done = run_di_code("mcp", "list", server=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("fx  (ready)")
    assert "    mcp__fx__add" in lines and "off  (disabled)" in lines


def test_a_server_that_does_not_start_in_time_says_so(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    mark = uuid.uuid4().hex
    env = {"MCP_FIXTURE_DIR": str(markers), "MCP_FIXTURE_INIT_DELAY": "1000", MARK: mark}
    slow = {**stdio_server("slow", markers), "env": env, "timeout": 1}
    (di_code_home / "config.toml").write_text(toml_table("slow", slow))
    llm_server.script(Turn(text="fine"))
    done = run_di_code("run", "--yes", "go on")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
    assert "MCP server slow failed to start: did not start within 1 s\n" in done.stderr
    wait_until(lambda: not marked(mark), "the server that did not start to be stopped")


def test_without_the_sdk_a_server_says_which_extra_to_install(
    llm_server: LLMServer, di_code_home: Path, markers: Path, workspace: Path
) -> None:
    """The SDK is the `mcp` extra; a plain install with a server configured says so in one line
    and answers. `sys.modules["mcp"] = None` is how Python marks a module as not importable."""
    (di_code_home / "config.toml").write_text(toml_table("fx", stdio_server("fx", markers)))
    llm_server.script(Turn(text="fine"))
    no_sdk = "import sys; sys.modules['mcp'] = None; from di_code.cli.app import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", no_sdk, "run", "--yes", "go on"],
        cwd=workspace,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
    expected = "MCP server fx failed to start: MCP servers need the MCP SDK: "
    assert expected + "pip install 'di-code[mcp]'\n" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (markers / "fx.pid").exists()
