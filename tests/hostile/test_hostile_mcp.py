"""MCP servers, attacked from README alone ("MCP servers", the Threat model's MCP and ACP
items, Permissions, Reliability): a repository that names a server, a server whose tool names,
schemas and results are hostile, one that never answers, dies, floods or ignores its stop, and
keys in its environment. Real servers written with the official SDK
(tests/support/mcp_fixture_server.py, its `scripted` tools), a scripted model."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import stat
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from di_code.tools.extensions.mcp_config import parse_servers
from tests.acp.conftest import agent as agent
from tests.cli.conftest import API_KEY, DI_CODE, RunDiCode, cli_env, request_text
from tests.support.chat import ended_within, spawn_chat
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.mcp_config import markers as markers
from tests.support.mcp_config import scripted_server, stdio_server, toml_table
from tests.support.mcp_fixture_server import serving_http
from tests.support.processes import MARK, SAFETY_TIMEOUT, alive, marked, until, wait_until
from tests.support.screen import Screen
from tests.support.stops import Launch, slow_mcp_server, spawned
from tests.support.wire import ToolCallSpec

BOUND = 5.0
"""Seconds from a signal to the exit: the README's second, with room for a loaded machine."""

NAME_RULE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
"""What every provider takes as a tool name."""

HOSTILE_TEXT = "\x1b[2J\x1b]0;pwned\x07\u202etxt.exe\x00\x9b31m"
RAW_CONTROLS = re.compile("[\x00\x07\x1b\x9b\u202e]")


def tool_result(body: dict[str, Any], call_id: str) -> str:
    """The text of the tool result `call_id` in a recorded OpenAI-style request."""
    found = [
        m for m in body["messages"] if m.get("role") == "tool" and m.get("tool_call_id") == call_id
    ]
    assert found, f"no result for {call_id}"
    content = found[0]["content"]
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def offered(llm_server: LLMServer) -> dict[str, dict[str, Any]]:
    """The tools of the last request, by name."""
    return {t["function"]["name"]: t["function"] for t in llm_server.requests[-1].body["tools"]}


def session_text(home: Path) -> str:
    [session] = (home / "sessions").rglob("*.jsonl")
    return session.read_text(encoding="utf-8")


def configure(home: Path, **servers: dict[str, object]) -> None:
    (home / "config.toml").write_text("".join(toml_table(n, s) for n, s in servers.items()))


# --- programs a repository can name ------------------------------------------------------


def planted_program(folder: Path, name: str, witness: Path) -> Path:
    """An executable in `folder` that leaves `witness` behind when anything runs it."""
    program = folder / name
    program.write_text(f"#!/bin/sh\necho ran > {witness}\nexec sleep 1000\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def test_an_untrusted_repository_s_mcp_json_naming_its_own_program_runs_nothing(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    """`.mcp.json` names a script of the repository by a relative path: neither `run` nor
    `mcp list` starts it until the project is trusted; trusted, it runs."""
    (workspace / ".git").mkdir()
    (workspace / "tools").mkdir()
    witness = tmp_path / "ran"
    planted_program(workspace / "tools", "server.sh", witness)
    servers = {"mcpServers": {"repo": {"command": "./tools/server.sh", "timeout": 10}}}
    (workspace / ".mcp.json").write_text(json.dumps(servers))
    llm_server.script(Turn(text="hi"))
    assert run_di_code("run", "hello").returncode == 0
    listed = run_di_code("mcp", "list", server=False)
    assert listed.returncode == 0, listed.stderr
    assert not witness.exists(), "an untrusted project's server ran"
    assert "mcp__repo" not in request_text(llm_server.requests[-1].body)

    assert run_di_code("trust").returncode == 0
    llm_server.script(Turn(text="hi again"))
    done = run_di_code("run", "hello")
    assert done.returncode == 0, done.stderr
    assert witness.exists(), "the trusted project's server did not run"


def test_a_user_server_named_by_a_bare_name_is_not_found_through_a_path_entry_into_the_workspace(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, workspace: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    """The user's `command = "tracker-mcp"`, a PATH with an empty entry (the current folder),
    and an untrusted repository that holds `tracker-mcp`: the repository's program is not the
    user's server."""
    (workspace / ".git").mkdir()
    witness = tmp_path / "ran"
    planted_program(workspace, "tracker-mcp", witness)
    configure(di_code_home, tracker={"command": "tracker-mcp", "timeout": 10})
    llm_server.script(Turn(text="hi"))
    path = ":" + os.environ["PATH"]
    done = run_di_code("run", "hello", env_extra={"PATH": path})
    assert done.returncode == 0, done.stderr
    assert not witness.exists(), "the repository's tracker-mcp ran as the user's server"


def test_a_server_command_with_escapes_is_shown_escaped_in_its_warning_and_in_mcp_list(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    """A command and arguments holding terminal escapes and bidi controls (a server that
    cannot start): the failure line and `mcp list` show them as escapes, never raw."""
    configure(
        di_code_home,
        odd={"command": f"/nonexistent/{HOSTILE_TEXT}", "args": [HOSTILE_TEXT], "timeout": 3},
    )
    llm_server.script(Turn(text="fine"))
    done = run_di_code("run", "hello")
    assert done.returncode == 0, done.stderr
    assert "MCP server odd failed to start" in done.stderr
    listed = run_di_code("mcp", "list", server=False)
    assert listed.returncode == 0, listed.stderr
    assert "odd" in listed.stdout
    for shown in (done.stderr, listed.stdout, listed.stderr):
        assert not RAW_CONTROLS.search(shown), repr(shown)


def test_the_trust_question_shows_a_server_s_escapes_and_line_breaks_escaped(
    llm_server: LLMServer, workspace: Path
) -> None:
    """The question lists each server of `.mcp.json` as written, but never as raw terminal
    codes: a command that would erase its line and an argument that would draw a line of its
    own, a window title, a bidi override."""
    (workspace / ".git").mkdir()
    command = "evil\x1b[2K\rharmless-looking"
    args = ["--x\nMCP server ok: safe", HOSTILE_TEXT]
    servers = {"mcpServers": {"repo": {"command": command, "args": args}}}
    (workspace / ".mcp.json").write_text(json.dumps(servers))
    child = spawn_chat(llm_server, workspace)
    screen = Screen(child, columns=140)
    try:
        screen.wait_for("y/N")
        screen.wait_for("harmless-looking")
        text, written = screen.seen, screen.written
    finally:
        child.close(force=True)
    assert "evil" in text
    for raw in ("evil\x1b[2K", "\rharmless", "\x1b]0;pwned", "\u202e", "\x9b31m", "\x00"):
        assert raw not in written, repr(raw)
    assert not any(line.startswith("MCP server ok") for line in text.splitlines()), text


# --- names and schemas from the server ----------------------------------------------------


def test_tool_names_alike_across_servers_and_hostile_names_each_stay_one_reachable_tool(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """Server `a` with tool `b__c` and server `b` with tool `c__d` next to a tool named with
    escapes, NUL, bidi and 200 characters. Every tool is offered under a name providers take,
    none twice, and a call of each reaches its own tool."""
    hostile = f"x{HOSTILE_TEXT}" + "y" * 200
    first = [
        {"name": "b__c", "answer": "first server "},
        {"name": hostile, "description": HOSTILE_TEXT, "answer": "hostile name "},
    ]
    second = [{"name": "c__d", "answer": "second server "}]
    configure(
        di_code_home,
        a=scripted_server("a", markers, first),
        b=scripted_server("b", markers, second),
    )
    llm_server.script(Turn(text="looked"))
    assert run_di_code("run", "look").returncode == 0
    tools = offered(llm_server)
    names = [n for n in tools if n.startswith(("mcp__a", "mcp__b"))]
    assert len(names) == 3, names
    assert all(NAME_RULE.fullmatch(name) for name in names), names

    llm_server.script(*[call(name, {"n": i}, f"c{i}") for i, name in enumerate(names)])
    llm_server.script(Turn(text="all answered"))
    done = run_di_code("run", "--yes", "call each")
    assert done.returncode == 0, done.stderr
    answers = {
        tool_result(llm_server.requests[-1].body, f"c{i}").split(" {")[0] for i in range(len(names))
    }
    assert answers == {"first server", "second server", "hostile name"}


def test_a_server_listing_one_tool_name_twice_never_offers_a_name_twice(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """A provider refuses a request with two tools of one name, and with it the whole session:
    a server that lists `dup` twice (and an empty name) costs at most its own duplicate."""
    tools = [
        {"name": "dup", "answer": "first dup "},
        {"name": "dup", "answer": "second dup "},
        {"name": "", "answer": "nameless "},
    ]
    configure(di_code_home, fx=scripted_server("fx", markers, tools))
    llm_server.script(Turn(text="looked"))
    done = run_di_code("run", "look")
    assert done.returncode == 0, done.stderr
    names = [t["function"]["name"] for t in llm_server.requests[-1].body["tools"]]
    assert len(names) == len(set(names)), names
    assert all(NAME_RULE.fullmatch(name) for name in names), names
    assert any(name.startswith("mcp__fx__dup") for name in names)


BACKTRACKING = {
    "type": "object",
    "properties": {"text": {"type": "string", "pattern": "^(a+)+$"}},
}


def nested_schema(levels: int) -> dict[str, Any]:
    """A schema whose JSON nests twice `levels` objects deep."""
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def test_hostile_schemas_refuse_their_calls_and_leave_the_server_s_other_tools_working(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """A schema whose `pattern` backtracks forever and one that is no JSON Schema: the run goes
    on, each call ends (the backtracking one refused, never a hang), and the server's plain
    tool still answers."""
    tools = [
        {"name": "regex", "inputSchema": BACKTRACKING, "answer": "regex ran "},
        {"name": "bogus", "inputSchema": {"type": 17, "properties": []}, "answer": "bogus ran "},
        {"name": "plain", "answer": "plain ran "},
    ]
    configure(di_code_home, fx=scripted_server("fx", markers, tools))
    calls = (
        ToolCallSpec("mcp__fx__regex", {"text": "a" * 40 + "!"}, "c1"),
        ToolCallSpec("mcp__fx__bogus", {}, "c2"),
        ToolCallSpec("mcp__fx__plain", {}, "c3"),
    )
    llm_server.script(Turn(tool_calls=calls), Turn(text="done"))
    done = run_di_code("run", "--yes", "call them")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n"
    assert "Traceback" not in done.stderr
    last = llm_server.requests[-1].body
    assert "took more than 5 s" in tool_result(last, "c1")
    assert tool_result(last, "c2")
    assert tool_result(last, "c3").startswith("plain ran")


@pytest.mark.xfail(
    strict=True,
    reason="the SDK's JSON parser stops at 200 levels: the whole tools/list answer is dropped, "
    "the server waits out its timeout and none of its tools is offered",
)
def test_a_schema_nested_800_objects_deep_costs_only_its_own_tool(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """One tool's schema nests 800 objects: the session goes on with the other servers (one
    warning at most), and the same server's plain tool is offered."""
    tools = [{"name": "deep", "inputSchema": nested_schema(400)}, {"name": "plain"}]
    configure(
        di_code_home,
        deep={**scripted_server("deep", markers, tools), "timeout": 10},
        fx=stdio_server("fx", markers),
    )
    llm_server.script(call("mcp__fx__add", {"a": 1, "b": 2}, "c1"), Turn(text="fine"))
    done = run_di_code("run", "--yes", "go")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
    assert len(done.stderr.strip().splitlines()) <= 1, done.stderr
    assert tool_result(llm_server.requests[-1].body, "c1") == "3"
    assert "mcp__deep__plain" in offered(llm_server)


# --- results from the server ----------------------------------------------------------------


def test_a_result_with_escapes_nul_and_bidi_reaches_the_model_and_the_session_as_it_is(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """Text from the server is the model's to read: it gets it whole; the session file holds
    every message, and stream-json escapes the controls."""
    tools = [{"name": "odd", "answer": HOSTILE_TEXT}]
    configure(di_code_home, fx=scripted_server("fx", markers, tools))
    llm_server.script(call("mcp__fx__odd", {}, "c1"), Turn(text="read it"))
    done = run_di_code("run", "--yes", "--output-format", "stream-json", "go")
    assert done.returncode == 0, done.stderr
    assert tool_result(llm_server.requests[-1].body, "c1").startswith(HOSTILE_TEXT)
    assert not RAW_CONTROLS.search(done.stdout + done.stderr)
    assert "pwned" in session_text(di_code_home)


def test_bytes_that_are_not_utf8_from_a_server_cost_at_most_that_call(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """A line that is not UTF-8 on the server's stdout (README: text from outside is made
    valid UTF-8): the call gets its answer, not the call's timeout, and the server stays up
    for the next call."""
    tools = [{"name": "garbage", "does": "garbage"}, {"name": "plain", "answer": "plain ran "}]
    server = {**scripted_server("fx", markers, tools), "timeout": 60}
    configure(di_code_home, fx=server)
    llm_server.script(
        call("mcp__fx__garbage", {}, "c1"), call("mcp__fx__plain", {}, "c2"), Turn(text="on")
    )
    started = time.monotonic()
    done = run_di_code("run", "--yes", "go")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 50, "the call waited for its timeout"
    assert done.stdout == "on\n"
    assert "Traceback" not in done.stderr
    last = llm_server.requests[-1].body
    assert tool_result(last, "c1") == "after the garbage"
    assert tool_result(last, "c2").startswith("plain ran")


def test_an_image_that_is_no_image_and_a_sound_reach_the_model_as_text(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """README: text, images and embedded resources come back as the result. A block marked
    `image` holding a web page (not base64) is not sent to the provider as an image (a provider
    refuses the request, and every later one of the conversation); audio is said in words."""
    configure(
        di_code_home, fx=scripted_server("fx", markers, [{"name": "odd", "does": "odd_content"}])
    )
    llm_server.script(call("mcp__fx__odd", {}, "c1"), Turn(text="seen"))
    vision = {"DI_CODE_MODEL": "openai/gpt-4.1"}  # a model that takes images
    done = run_di_code("run", "--yes", "go", env_extra=vision)
    assert done.returncode == 0, done.stderr
    sent = request_text(llm_server.requests[-1].body)
    assert "odd content follows" in sent
    assert "data:text/html" not in sent
    assert "audio" in sent


# --- servers that do not answer, die or flood ------------------------------------------------


def test_a_server_that_never_answers_tools_list_is_one_warning_and_is_stopped(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """It answers `initialize`, then never `tools/list`: the start's timeout holds for it."""
    mark = os.urandom(8).hex()
    server = scripted_server(
        "mute", markers, [{"name": "t"}], MCP_FIXTURE_LIST_DELAY="1000", **{MARK: mark}
    )
    configure(di_code_home, mute={**server, "timeout": 10})
    llm_server.script(Turn(text="fine"))
    done = run_di_code("run", "--yes", "go on")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
    assert "MCP server mute failed to start: did not start within 10 s\n" in done.stderr
    assert (markers / "mute.listing").exists()
    wait_until(lambda: not marked(mark), "the server that never listed its tools to be stopped")


def test_a_call_the_server_never_answers_ends_at_the_call_timeout_as_an_error_result(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """`timeout`: seconds to start, and per call."""
    tools = [{"name": "hang", "does": "hang"}]
    configure(di_code_home, fx={**scripted_server("fx", markers, tools), "timeout": 10})
    llm_server.script(call("mcp__fx__hang", {}, "c1"), Turn(text="gave up"))
    done = run_di_code("run", "--yes", "go")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "gave up\n"
    assert (markers / "fx.called").exists()
    assert tool_result(llm_server.requests[-1].body, "c1")


def test_a_server_that_dies_mid_call_is_an_error_result_at_once_and_the_run_goes_on(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """The server exits during the call: the model is told (not after the 60 s timeout), a
    later call of its tools is an error result too, and the run ends with its answer."""
    tools = [{"name": "die", "does": "die"}, {"name": "plain", "answer": "plain ran "}]
    configure(di_code_home, fx={**scripted_server("fx", markers, tools), "timeout": 60})
    llm_server.script(
        call("mcp__fx__die", {}, "c1"), call("mcp__fx__plain", {}, "c2"), Turn(text="after")
    )
    started = time.monotonic()
    done = run_di_code("run", "--yes", "go")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 50, "the dead server's call waited for its timeout"
    assert done.stdout == "after\n"
    assert "Traceback" not in done.stderr
    last = llm_server.requests[-1].body
    assert not tool_result(last, "c2").startswith("plain ran")


def test_a_server_flooding_notifications_and_stderr_still_answers_and_stays_off_the_terminal(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    tools = [{"name": "flood", "does": "flood"}]
    configure(di_code_home, fx=scripted_server("fx", markers, tools))
    llm_server.script(call("mcp__fx__flood", {"count": 20_000}, "c1"), Turn(text="calm"))
    done = run_di_code("run", "--yes", "go")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "calm\n"
    assert "flood" not in done.stderr
    assert tool_result(llm_server.requests[-1].body, "c1") == "flooded"


def test_sigterm_during_a_call_of_a_server_deaf_to_term_with_a_setsid_helper_ends_everything(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    """The server ignores TERM, HUP and INT, left a helper in a session of its own and is in
    a call that sleeps: SIGTERM ends di-code 143 within the bound, server and helper with it."""
    slow_mcp_server(launch, di_code_home, init_delay=0, helper=True, deaf=True)
    llm_server.script(call("mcp__slow__slow", {"seconds": 1000}, "c1"))
    launch.start()
    launch.wait_for("slow.slow")
    code, seconds, stderr = launch.stop(signal.SIGTERM)
    print(f"ended in {seconds:.2f} s")
    assert code == 143, stderr
    assert seconds < BOUND
    assert "Traceback" not in stderr


def test_esc_in_chat_ends_a_call_the_server_never_answers_and_the_server_still_serves(
    launch: Launch, llm_server: LLMServer, di_code_home: Path
) -> None:
    """Esc ends the turn at once, whatever the server does with the call; the next turn calls
    the same server, and Ctrl-D leaves nothing running."""
    tools = [{"name": "hang", "does": "hang"}, {"name": "plain", "answer": "plain ran "}]
    server = scripted_server("fx", launch.folder, tools, **{MARK: launch.mark})
    configure(di_code_home, fx=server)
    llm_server.script(
        call("mcp__fx__hang", {}, "c1"), call("mcp__fx__plain", {}, "c2"), Turn(text="Still here")
    )
    child = spawned(launch, "chat", "--yes", "--sandbox", "off")
    screen = Screen(child, columns=120)
    try:
        screen.wait_for("mcp: 1/1 ready")
        child.sendline("go")
        launch.wait_for("fx.called")
        started = time.monotonic()
        child.send("\x1b")
        screen.wait_for("aborted")
        print(f"turn ended in {time.monotonic() - started:.2f} s")
        assert time.monotonic() - started < BOUND
        child.sendline("are you there")
        screen.wait_for("Still here")
        child.sendeof()
        ended_within(child, SAFETY_TIMEOUT, "Ctrl-D", screen)
        child.close()
        assert child.exitstatus == 0
    finally:
        child.close(force=True)
    launch.assert_nothing_left()
    assert tool_result(llm_server.requests[-1].body, "c2").startswith("plain ran")


def test_two_runs_starting_the_same_server_at_once_each_use_their_own_and_end_it(
    llm_server: LLMServer, di_code_home: Path, markers: Path, workspace: Path
) -> None:
    """Two `run`s in one folder with one config: each starts and offers its own server, and
    each server ends with its run."""
    mark = os.urandom(8).hex()
    tools = [{"name": "plain", "answer": "plain ran "}]
    configure(di_code_home, fx=scripted_server("fx", markers, tools, **{MARK: mark}))
    llm_server.script(Turn(text="ok"), Turn(text="ok"))
    runs = [
        subprocess.Popen(
            [DI_CODE, "run", "--yes", f"go {n}"],
            cwd=workspace,
            env=cli_env(di_code_home, llm_server),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in (1, 2)
    ]
    outputs = [run.communicate(timeout=SAFETY_TIMEOUT * 2) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert [out for out, _ in outputs] == ["ok\n", "ok\n"]
    for request in llm_server.requests:
        assert "mcp__fx__plain" in {t["function"]["name"] for t in request.body["tools"]}
    wait_until(lambda: not marked(mark), "both servers to end with their runs")


# --- permissions and secrets -------------------------------------------------------------------


def test_ask_mode_without_a_terminal_and_a_deny_rule_each_keep_the_call_from_the_server(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """`ask` with no terminal refuses the MCP call and tells the model; in `auto`, a deny rule
    `mcp__SERVER` refuses every tool of that server. The server never sees either call."""
    tools = [{"name": "hang", "does": "hang"}]
    configure(di_code_home, fx=scripted_server("fx", markers, tools))
    llm_server.script(call("mcp__fx__hang", {}, "c1"), Turn(text="refused"))
    done = run_di_code("run", "go")
    assert done.returncode == 0, done.stderr
    assert tool_result(llm_server.requests[-1].body, "c1")
    assert not (markers / "fx.called").exists()

    config = (di_code_home / "config.toml").read_text()
    (di_code_home / "config.toml").write_text('[permissions]\ndeny = ["mcp__fx"]\n\n' + config)
    llm_server.script(call("mcp__fx__hang", {}, "c2"), Turn(text="denied"))
    done = run_di_code("run", "--yes", "go")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "denied\n"
    assert not (markers / "fx.called").exists()


def test_an_mcp_rule_covers_only_its_own_server_or_tool_never_one_whose_name_extends_it(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """README: `mcp__SERVER` matches every tool of that server, `mcp__SERVER__TOOL` that tool.
    A server `fx__b` (whose tools would start `mcp__fx__`, as fx's do) or `fx_` is refused with
    one line each, and a rule for tool `plain` does not cover tool `plain__die`: asked, and
    with no terminal refused."""
    tools = [{"name": "plain"}, {"name": "plain__die", "does": "die"}]
    config = '[permissions]\nallow = ["mcp__fx__plain"]\n\n'
    config += toml_table("fx", scripted_server("fx", markers, tools))
    for twin in ("fx__b", "fx_"):
        config += toml_table(twin, scripted_server(twin, markers, [{"name": "t"}]))
    (di_code_home / "config.toml").write_text(config)
    llm_server.script(
        call("mcp__fx__plain", {}, "c1"), call("mcp__fx__plain__die", {}, "c2"), Turn(text="ok")
    )
    done = run_di_code("run", "go")
    assert done.returncode == 0, done.stderr
    assert tool_result(llm_server.requests[1].body, "c1") == "{}"  # allowed by the rule
    assert "Permission denied" in tool_result(llm_server.requests[2].body, "c2")
    assert not (markers / "fx.called").exists(), "the rule for plain let plain__die run"
    for twin in ("fx__b", "fx_"):
        assert done.stderr.count(f"MCP server '{twin}' ignored") == 1, done.stderr
    assert not any(name.startswith(("mcp__fx__b", "mcp__fx___")) for name in offered(llm_server))


def test_a_server_asking_to_use_the_model_is_refused_and_nothing_reaches_the_provider(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """MCP sampling lets a server ask the client to run a prompt on its model, with the user's
    key and past every approval: a server that asks during a call gets a refusal."""
    configure(di_code_home, fx=scripted_server("fx", markers, [{"name": "s", "does": "sample"}]))
    llm_server.script(call("mcp__fx__s", {}, "c1"), Turn(text="done"))
    done = run_di_code("run", "--yes", "go")
    assert done.returncode == 0, done.stderr
    assert len(llm_server.requests) == 2
    assert "SAMPLED" not in request_text(llm_server.requests[0].body)
    assert tool_result(llm_server.requests[-1].body, "c1").startswith("refused")


def test_an_http_server_that_never_answers_is_one_warning_and_the_run_goes_on(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    """A URL whose server takes the connection and says nothing."""
    listener = socket.create_server(("127.0.0.1", 0))
    taken: list[socket.socket] = []

    def take() -> None:
        with contextlib.suppress(OSError):
            while True:
                taken.append(listener.accept()[0])

    threading.Thread(target=take, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        configure(di_code_home, mute={"url": url, "timeout": 5})
        llm_server.script(Turn(text="fine"))
        done = run_di_code("run", "--yes", "go on")
    finally:
        listener.close()
        for connection in taken:
            connection.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
    assert done.stderr.count("MCP server mute failed to start") == 1, done.stderr
    assert "Traceback" not in done.stderr


OTHER_KEY = "sk-ant-other-provider-0815-secret"


def test_a_server_gets_its_env_but_no_provider_key_and_a_key_it_echoes_is_never_saved(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """`env = {...}` reaches the server, the provider keys in di-code's environment do not;
    a key the model sends through the server and gets back is `***` in the session file and
    the output."""
    tools = [{"name": "environment", "does": "environment"}, {"name": "echo"}]
    server = scripted_server("fx", markers, tools, TRACKER_TOKEN="tracker-token-1234")
    configure(di_code_home, fx=server)
    llm_server.script(
        call("mcp__fx__environment", {}, "c1"),
        call("mcp__fx__echo", {"said": API_KEY}, "c2"),
        Turn(text="done"),
    )
    done = run_di_code("run", "--yes", "go", env_extra={"ANTHROPIC_API_KEY": OTHER_KEY})
    assert done.returncode == 0, done.stderr
    environment = tool_result(llm_server.requests[1].body, "c1")
    assert "TRACKER_TOKEN=tracker-token-1234" in environment
    assert "PATH=" in environment
    assert API_KEY not in environment and OTHER_KEY not in environment
    saved = session_text(di_code_home)
    assert "***" in saved
    assert API_KEY not in saved and OTHER_KEY not in saved
    assert API_KEY not in done.stdout + done.stderr


def test_an_http_server_s_authorization_header_it_echoes_is_hidden_in_output_and_session(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, markers: Path
) -> None:
    """README Secrets: auth headers are keys di-code holds, and a key goes only to the endpoint
    it was given for. The server's `headers` token sent back in a result is `***` to the model,
    in the output and in the session file."""
    token = "mcp-bearer-token-98765-secret"
    with serving_http(markers) as url:
        configure(di_code_home, web={"url": url, "headers": {"Authorization": f"Bearer {token}"}})
        llm_server.script(call("mcp__web__whoami", {}, "c1"), Turn(text="known"))
        done = run_di_code("run", "--yes", "--output-format", "stream-json", "go")
    assert done.returncode == 0, done.stderr
    assert tool_result(llm_server.requests[-1].body, "c1") == "you are ***"
    assert token not in request_text(llm_server.requests[-1].body)
    assert token not in done.stdout + done.stderr
    assert token not in session_text(di_code_home)


# --- editors (ACP) ------------------------------------------------------------------------------


def editor_server(name: str, markers: Path) -> Any:
    """The fixture server `name` as an editor passes it with `session/new` (no cwd)."""
    from acp.schema import EnvVariable, McpServerStdio

    fixture = stdio_server(name, markers)
    fixture_env, args = fixture["env"], fixture["args"]
    assert isinstance(fixture_env, dict) and isinstance(args, list)
    env = {**fixture_env, "PYTHONPATH": str(fixture["cwd"])}
    return McpServerStdio(
        name=name,
        command=str(fixture["command"]),
        args=[str(arg) for arg in args],
        env=[EnvVariable(name=key, value=value) for key, value in env.items()],
    )


async def test_an_editor_s_server_named_to_extend_another_s_rule_is_refused_with_a_note(
    agent: Any, llm_server: LLMServer, workspace: Path, markers: Path
) -> None:
    """The server-name rule holds for every source: an editor's `fx__b` (whose tools would
    start `mcp__fx__`, covered by a rule for fx) is not started, and the editor is told."""
    pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")
    from tests.support.acp_editor import RecordingClient, prompt

    llm_server.script(Turn(text="ok"))
    editor = RecordingClient()
    conn = await agent(editor, "--permission-mode", "auto")
    servers = [editor_server("fx", markers), editor_server("fx__b", markers)]
    session = await conn.new_session(cwd=str(workspace), mcp_servers=servers)
    await prompt(conn, session.session_id, "hi")
    assert any(name.startswith("mcp__fx__") for name in offered(llm_server))
    assert not any(name.startswith("mcp__fx__b__") for name in offered(llm_server))
    assert not (markers / "fx__b.pid").exists()
    assert "MCP server 'fx__b' ignored" in editor.said(session.session_id)


async def test_an_editor_s_server_starts_untrusted_the_project_s_does_not_and_close_stops_it(
    agent: Any, llm_server: LLMServer, workspace: Path, markers: Path, tmp_path: Path
) -> None:
    """README ACP: the servers an editor passes start without trust; the untrusted project's
    `.mcp.json` still starts nothing; `session/close` stops the session's MCP servers."""
    pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")
    from tests.support.acp_editor import RecordingClient, prompt

    (workspace / ".git").mkdir()
    witness = tmp_path / "ran"
    planted_program(workspace, "server.sh", witness)
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"repo": {"command": "./server.sh"}}})
    )
    server = editor_server("fx", markers)
    llm_server.script(call("mcp__fx__add", {"a": 2, "b": 40}, "c1"), Turn(text="42"))
    conn = await agent(RecordingClient(), "--permission-mode", "auto")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[server])
    await prompt(conn, session.session_id, "add")
    assert tool_result(llm_server.requests[-1].body, "c1") == "42"
    assert not any(name.startswith("mcp__repo") for name in offered(llm_server))
    assert not witness.exists(), "the untrusted project's server ran in an editor's session"
    pid = int((markers / "fx.pid").read_text())
    await conn.close_session(session_id=session.session_id)
    await until(lambda: not alive(pid), "the editor's server to stop with its session")


def test_an_mcp_server_name_ending_in_a_line_break_is_refused() -> None:
    """`$` in a pattern also matches before a final newline: the whole name is held to it."""
    servers, warnings = parse_servers({"tracker\n": {"command": "srv"}}, "config.toml")
    assert servers == [] and len(warnings) == 1 and "'tracker\\n' ignored" in warnings[0]
