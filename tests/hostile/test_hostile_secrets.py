# ruff: noqa: E402
"""Secrets and endpoints, attacked from README's "Secrets", "Models and keys" and "Threat model"
(its Everywhere, ACP and fetch rows): a fake key planted in every channel in and out of a real
`di-code`, and keys watched on two loopback model servers, one per endpoint, so a key that
reaches a server it was not given for is seen there."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp.schema import AgentThoughtChunk, ClientCapabilities

from di_code.tools.process.sandbox import bubblewrap_works
from tests.acp.conftest import agent as agent
from tests.acp.conftest import editor_env as editor_env
from tests.batch.conftest import make_repo, write_call, write_tasks
from tests.cli.conftest import API_KEY, DI_CODE, RunDiCode, WriteHook, cli_env, request_text
from tests.cli.conftest import run_di_code as run_di_code  # the fixtures, for this folder too
from tests.cli.conftest import user_hook as user_hook
from tests.cli.conftest import workspace as workspace
from tests.support.acp_editor import RecordingClient, TerminalClient, prompt
from tests.support.agent_files import agent_file
from tests.support.chat import TIMEOUT as CHAT_TIMEOUT
from tests.support.chat import spawn_env
from tests.support.llm_server import HttpError, LLMServer, RecordedRequest, ToolCallSpec, Turn
from tests.support.mcp_config import stdio_server, toml_table
from tests.support.secrets import streamed
from tests.support.web_site import Site, serve_site

OPENAI_KEY = "sk-openai-given-for-a-0111"
ANTHROPIC_KEY = "sk-ant-given-for-b-0222"
ENV_KEY = "sk-environment-key-0333"
GEMINI_KEY = "AIza-gemini-given-for-b-0444"


@pytest.fixture
def other() -> Iterator[LLMServer]:
    """A second endpoint: a key given for the first must never reach it."""
    with LLMServer() as server:
        yield server


@pytest.fixture
def site() -> Iterator[str]:
    yield from serve_site()


def sent_keys(server: LLMServer) -> set[str]:
    """Every key a server was sent, in its path, a header or as text in a body."""
    keys = {OPENAI_KEY, ANTHROPIC_KEY, ENV_KEY, API_KEY, GEMINI_KEY}
    return {key for request in server.requests for key in keys if key in _whole(request)}


def _whole(request: RecordedRequest) -> str:
    return request.path + json.dumps(request.headers) + request_text(request.body)


def stream_json_lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


# --- channels out -------------------------------------------------------------------------


def test_a_key_streamed_three_characters_at_a_time_in_thinking_answer_and_arguments_never_joins(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """stream-json's deltas of thinking, text and a tool call's arguments, each put together
    as a reader does, hold no key; the command still runs as written."""
    llm_server.script(
        Turn(
            thinking=f"the key is {API_KEY}, think",
            text=f"say {API_KEY} now",
            tool_calls=(ToolCallSpec("bash", {"command": f"echo {API_KEY} > out.txt"}),),
            chunk_size=3,
        ),
        Turn(text="done"),
    )
    done = run_di_code("run", "--yes", "--thinking", "--output-format", "stream-json", "go")
    assert done.returncode == 0, done.stderr
    assert (workspace / "out.txt").read_text() == f"{API_KEY}\n"
    updates = [e["event"] for e in stream_json_lines(done.stdout) if e["type"] == "message_update"]
    for kind in ("thinking_delta", "text_delta", "tool_call_delta"):
        joined = "".join(e["delta"] for e in updates if e["type"] == kind)
        assert "***" in joined and API_KEY not in joined, kind
    assert API_KEY not in done.stdout + done.stderr + streamed(done.stdout)


def test_an_answer_cut_off_inside_a_key_leaves_no_long_piece_of_it_in_any_format(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    """The reply ends (output limit) 15 characters into the key, two characters a delta: the
    held-back start of the key is let out at the end, and a piece that long is hidden too."""
    piece = OPENAI_KEY[:15]
    for output_format in ("text", "json", "stream-json"):
        llm_server.script(Turn(text=f"the key: {piece}", stop_reason="length", chunk_size=2))
        env = {"OPENAI_API_KEY": OPENAI_KEY}
        done = run_di_code("run", "--output-format", output_format, "go", env_extra=env)
        shown = done.stdout + done.stderr + streamed(done.stdout)
        assert "the key: ***" in shown and OPENAI_KEY[:12] not in shown, output_format


def test_a_subagent_s_transcript_holding_the_key_is_shown_and_saved_only_hidden(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    """The subagent's command, its output and its answer hold the key: the parent's
    stream-json (the subagent's transcript included) and every session file show `***`."""
    task = {"description": "a job", "prompt": "print the key"}
    echo = ToolCallSpec("bash", {"command": f"echo {API_KEY}"}, "b1")
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("task", task, "t1"),)),
        Turn(tool_calls=(echo,)),
        Turn(text=f"the sub printed {API_KEY}"),
        Turn(text="all done"),
    )
    done = run_di_code("run", "--yes", "--output-format", "stream-json", "go")
    assert done.returncode == 0, done.stderr
    assert "the sub printed ***" in done.stdout and "echo ***" in done.stdout
    assert API_KEY not in done.stdout + done.stderr + streamed(done.stdout)
    saved = [p.read_text(encoding="utf-8") for p in (di_code_home / "sessions").rglob("*.jsonl")]
    assert saved and not any(API_KEY in text for text in saved)


def test_a_prompt_hook_reads_the_key_the_user_typed_only_hidden(
    run_di_code: RunDiCode, llm_server: LLMServer, user_hook: WriteHook, tmp_path: Path
) -> None:
    """The JSON a hook reads on stdin shows the key as `***`, for the prompt event too."""
    hooks_read = tmp_path / "read.json"
    user_hook("UserPromptSubmit", "dump.sh", f'cat > "{hooks_read}"\n')
    llm_server.script(Turn(text="ok"))
    done = run_di_code("run", f"my key is {API_KEY}, keep it")
    assert done.returncode == 0, done.stderr
    assert "my key is ***, keep it" in hooks_read.read_text()


async def test_an_editor_s_prompt_thinking_and_compaction_summary_reach_editor_log_session_hidden(
    agent: Any, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    """Editor messages in (a prompt holding the key), thinking streamed in pieces, and the
    summary `/compact` has the model write: none of them shows the key to the editor, in `acp
    --log FILE`, or in the session file."""
    llm_server.script(
        Turn(thinking=f"so the key is {API_KEY} then", text="noted", chunk_size=3),
        Turn(text="second"),
        Turn(text=f"Summary: the user's key is {API_KEY}."),
    )
    client = RecordingClient()
    log = workspace.parent / "acp.log"
    conn = await agent(client, "--thinking", "--context-window", "4000", "--log", str(log))
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, f"my key is {API_KEY}. " + "words " * 1000)
    await prompt(conn, session.session_id, "and then?")
    await prompt(conn, session.session_id, "/compact")
    thoughts = "".join(u.content.text for u in client.of(AgentThoughtChunk))
    assert thoughts == "so the key is *** then"
    shown = "\n".join(update.model_dump_json() for _, update in client.updates)
    assert API_KEY not in shown
    assert API_KEY not in log.read_text(encoding="utf-8")
    saved = [p.read_text(encoding="utf-8") for p in (di_code_home / "sessions").rglob("*.jsonl")]
    assert saved and not any(API_KEY in text for text in saved)
    assert any("Summary: the user's key is ***." in text for text in saved), "no compaction"


# --- endpoints ----------------------------------------------------------------------------


def test_base_url_with_a_model_of_another_provider_gets_that_provider_s_key_alone(
    run_di_code: RunDiCode, llm_server: LLMServer, other: LLMServer
) -> None:
    """`--base-url A --model anthropic/...` while OpenAI's key and URL are in the environment:
    A is sent Anthropic's key, and OpenAI's key goes nowhere."""
    llm_server.script(Turn(text="hi"))
    env = {
        "OPENAI_API_KEY": OPENAI_KEY,
        "OPENAI_BASE_URL": other.openai_base_url,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
    }
    given = ("--base-url", llm_server.anthropic_base_url, "--model", "anthropic/claude-sonnet-4-5")
    done = run_di_code("run", *given, "go", env_extra=env)
    assert done.returncode == 0, done.stderr
    assert [r.headers.get("x-api-key") for r in llm_server.requests] == [ANTHROPIC_KEY]
    assert sent_keys(llm_server) == {ANTHROPIC_KEY} and other.requests == []


def test_a_subagent_on_another_provider_is_sent_its_own_key_and_not_the_one_in_its_prompt(
    run_di_code: RunDiCode, llm_server: LLMServer, other: LLMServer, di_code_home: Path
) -> None:
    """The session runs on OpenAI at A with `--api-key`; its subagent's model is Anthropic's
    at B. The task's prompt (the parent model's words) holds A's key: B sees it as `***`."""
    agent_file(di_code_home / "agents", "anthropic/claude-sonnet-4-5")
    task = {"description": "a job", "prompt": f"use {OPENAI_KEY} there", "subagent_type": "helper"}
    llm_server.script(Turn(tool_calls=(ToolCallSpec("task", task, "t1"),)), Turn(text="done"))
    other.script(Turn(text="the sub's answer"))
    env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "ANTHROPIC_BASE_URL": other.anthropic_base_url}
    given = ("--base-url", llm_server.openai_base_url, "--api-key", OPENAI_KEY)
    done = run_di_code("run", *given, "--model", "openai/test-model", "go", env_extra=env)
    assert done.returncode == 0, done.stderr
    assert sent_keys(llm_server) == {OPENAI_KEY}
    assert sent_keys(other) == {ANTHROPIC_KEY}
    assert "use *** there" in request_text(other.requests[0].body)


def test_a_base_url_password_goes_only_to_its_url_and_is_never_shown(
    run_di_code: RunDiCode, llm_server: LLMServer, other: LLMServer, di_code_home: Path
) -> None:
    """`--base-url http://user:PASSWORD@A`: a subagent on Anthropic at B is sent the password
    (in its task's prompt) as `***`, and the output and session hide it too."""
    password = "pw-for-server-a-0555"
    base_url = llm_server.openai_base_url.replace("http://", f"http://me:{password}@")
    agent_file(di_code_home / "agents", "anthropic/claude-sonnet-4-5")
    task = {"description": "a job", "prompt": f"log in with {password}", "subagent_type": "helper"}
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("task", task, "t1"),)), Turn(text=f"used {password}")
    )
    other.script(Turn(text="the sub's answer"))
    env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "ANTHROPIC_BASE_URL": other.anthropic_base_url}
    flags = ("--base-url", base_url, "--api-key", OPENAI_KEY, "--model", "openai/test-model")
    done = run_di_code("run", *flags, "--output-format", "stream-json", "go", env_extra=env)
    assert done.returncode == 0, done.stderr
    assert "log in with ***" in request_text(other.requests[0].body)
    assert password not in _whole(other.requests[0])
    assert "used ***" in done.stdout and password not in done.stdout + done.stderr
    saved = [p.read_text(encoding="utf-8") for p in (di_code_home / "sessions").rglob("*.jsonl")]
    assert saved and not any(password in text for text in saved)


@pytest.mark.parametrize(
    ("replies", "code"),
    [
        ((HttpError(500, "boom"), HttpError(429, "slow down"), Turn(text="done")), 0),
        ((HttpError(401, "Incorrect API key provided"),), 1),
    ],
    ids=["retried", "refused-key"],
)
def test_retries_after_http_errors_go_to_the_same_url_with_the_same_key(
    run_di_code: RunDiCode, llm_server: LLMServer, other: LLMServer, replies: Any, code: int
) -> None:
    """A 500 and a 429 are retried at the URL given, never at the environment's URL; a key
    refused with 401 is not swapped for the environment's key."""
    llm_server.script(*replies)
    env = {"OPENAI_BASE_URL": other.openai_base_url, "OPENAI_API_KEY": ENV_KEY}
    given = ("--base-url", llm_server.openai_base_url, "--api-key", OPENAI_KEY)
    done = run_di_code("run", *given, "--model", "openai/test-model", "go", env_extra=env)
    assert done.returncode == code, done.stderr
    auth = [r.headers["authorization"] for r in llm_server.requests]
    assert auth == [f"Bearer {OPENAI_KEY}"] * len(replies) and other.requests == []


def test_a_session_continued_on_gemini_sends_gemini_s_key_alone_and_not_in_the_url(
    run_di_code: RunDiCode, llm_server: LLMServer, other: LLMServer, workspace: Path
) -> None:
    """A session that read OpenAI's key from `.env` is continued with `--model gemini/...`:
    Gemini's server gets its own key in a header (not in the URL) and OpenAI's only as `***`."""
    (workspace / ".env").write_text(f"OPENAI_API_KEY={OPENAI_KEY}\n")
    llm_server.script(Turn(tool_calls=(ToolCallSpec("read", {"path": ".env"}),)), Turn(text="ok"))
    other.script(Turn(text="gemini here"))
    env = {
        "OPENAI_API_KEY": OPENAI_KEY,
        "GEMINI_API_KEY": GEMINI_KEY,
        "GEMINI_BASE_URL": other.anthropic_base_url,
    }
    assert run_di_code("run", "--yes", "read it", env_extra=env).returncode == 0
    done = run_di_code("run", "-c", "--model", "gemini/gemini-2.5-flash", "go", env_extra=env)
    assert done.returncode == 0, done.stderr
    assert sent_keys(llm_server) == {OPENAI_KEY}
    assert sent_keys(other) == {GEMINI_KEY}
    assert GEMINI_KEY not in other.requests[0].path
    assert "OPENAI_API_KEY=***" in request_text(other.requests[0].body)


def test_another_provider_s_key_read_from_a_file_is_not_sent_as_text_to_this_provider(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """Anthropic's key is set up (di-code would send it to Anthropic after `/model`), and the
    model reads a `.env` holding it while on OpenAI: the next request to OpenAI holds `***`."""
    (workspace / ".env").write_text(f"ANTHROPIC_API_KEY={ANTHROPIC_KEY}\n")
    llm_server.script(Turn(tool_calls=(ToolCallSpec("read", {"path": ".env"}),)), Turn(text="ok"))
    env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}
    done = run_di_code("run", "--yes", "--output-format", "stream-json", "go", env_extra=env)
    assert done.returncode == 0, done.stderr
    assert "ANTHROPIC_API_KEY=***" in request_text(llm_server.requests[-1].body)
    assert ANTHROPIC_KEY not in done.stdout


def test_a_placeholder_in_another_provider_s_key_variable_is_not_hidden_from_the_model(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """`OPENAI_API_KEY=EMPTY` (vLLM's placeholder) while on Anthropic: that is no key, and the
    model reading `"EMPTY"` in a file sees it as written (or its edits would not match)."""
    (workspace / "app.py").write_text('TOKEN = "EMPTY"\n')
    llm_server.script(Turn(tool_calls=(ToolCallSpec("read", {"path": "app.py"}),)), Turn())
    env = {
        "OPENAI_API_KEY": "EMPTY",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": llm_server.anthropic_base_url,
    }
    model = ("--model", "anthropic/claude-sonnet-4-5")
    done = run_di_code("run", "--yes", *model, "go", env_extra=env)
    assert done.returncode == 0, done.stderr
    assert 'TOKEN = \\"EMPTY\\"' in request_text(llm_server.requests[-1].body)


def test_a_configured_provider_s_key_variable_is_not_in_bash_s_environment(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    """`api_key_env = "CORP_TOKEN"` in the user's provider table: an unsandboxed command cannot
    read the variable nor find the key under any name."""
    (di_code_home / "config.toml").write_text(
        f'[providers.corp]\napi = "openai-completions"\nbase_url = "{llm_server.openai_base_url}"'
        '\napi_key_env = "CORP_TOKEN"\nmodels = ["test-model"]\n'
    )
    command = f"printenv CORP_TOKEN > seen.txt; printenv | grep -c {ENV_KEY} > count.txt; true"
    llm_server.script(Turn(tool_calls=(ToolCallSpec("bash", {"command": command}),)), Turn())
    flags = ("--yes", "--sandbox", "off", "--model", "corp/test-model")
    done = run_di_code("run", *flags, "go", env_extra={"CORP_TOKEN": ENV_KEY})
    assert done.returncode == 0, done.stderr
    assert llm_server.requests[0].headers["authorization"] == f"Bearer {ENV_KEY}"
    assert (workspace / "seen.txt").read_text() == ""
    assert (workspace / "count.txt").read_text() == "0\n"


# --- fetch --------------------------------------------------------------------------------


def percent_encoded(text: str) -> str:
    return "".join(f"%{ord(c):02X}" for c in text)


@pytest.mark.parametrize(
    "query",
    [
        pytest.param(lambda key: percent_encoded(key), id="every-character-encoded"),
        pytest.param(lambda key: key.replace("-", "%2D"), id="dashes-encoded"),
        pytest.param(lambda key: f"x{key[3:16]}y", id="a-13-character-piece"),
    ],
)
def test_a_url_holding_the_key_percent_encoded_is_not_fetched(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, site: str, query: Any
) -> None:
    """The site decodes `%73k-...` to the key: the URL holds it, and is never asked for."""
    (di_code_home / "config.toml").write_text('[permissions]\nallow = ["fetch:127.0.0.1"]\n')
    Site.asked.clear()
    url = f"{site}/page?k={query(API_KEY)}"
    llm_server.script(Turn(tool_calls=(ToolCallSpec("fetch", {"url": url}),)), Turn(text="ok"))
    done = run_di_code("run", "read it")
    assert done.returncode == 0, done.stderr
    assert Site.asked == []
    assert "Not fetched: the URL holds a key" in request_text(llm_server.requests[-1].body)


def test_a_redirect_to_a_url_holding_the_key_is_not_followed(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, site: str
) -> None:
    """The site, not the model, names the key's URL (same host, so redirects are followed)."""
    (di_code_home / "config.toml").write_text('[permissions]\nallow = ["fetch:127.0.0.1"]\n')
    Site.asked.clear()
    Site.moved["/leak"] = f"/page?k={API_KEY}"
    fetch = ToolCallSpec("fetch", {"url": f"{site}/leak"})
    llm_server.script(Turn(tool_calls=(fetch,)), Turn(text="ok"))
    try:
        done = run_di_code("run", "read it")
    finally:
        del Site.moved["/leak"]
    assert done.returncode == 0, done.stderr
    assert Site.asked == ["/leak"]
    assert "Not fetched: the URL holds a key" in request_text(llm_server.requests[-1].body)


async def test_an_editor_s_model_select_across_providers_sends_each_key_only_to_its_url(
    agent: Any, llm_server: LLMServer, other: LLMServer, workspace: Path
) -> None:
    """`acp --base-url A --api-key K`; Anthropic (and OpenAI's public URL) at B. The editor
    picks Anthropic, then OpenAI again, then a mode: each key reaches only its own server, in
    a header or as text the conversation holds (a `.env` read, an answer quoting a key)."""
    (workspace / ".env").write_text(f"OPENAI_API_KEY={OPENAI_KEY}\n")
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("read", {"path": ".env"}),)),
        Turn(text="read it"),
        Turn(text="back on OpenAI"),
        Turn(text="in read-only"),
    )
    other.script(Turn(text=f"Anthropic's key would be {ANTHROPIC_KEY}"))
    env = {
        "OPENAI_API_KEY": ENV_KEY,
        "OPENAI_BASE_URL": other.openai_base_url,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": other.anthropic_base_url,
    }
    given = ("--base-url", llm_server.openai_base_url, "--api-key", OPENAI_KEY)
    conn = await agent(
        RecordingClient(), *given, "--model", "openai/test-model", "--permission-mode", "auto",
        env_extra=env,
    )  # fmt: skip
    sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    await prompt(conn, sid, "read the env file")
    for value in ("anthropic/claude-sonnet-4-5", "openai/test-model"):
        await conn.set_config_option(config_id="model", session_id=sid, value=value)
        await prompt(conn, sid, f"now on {value}")
    await conn.set_config_option(config_id="mode", session_id=sid, value="read-only")
    await prompt(conn, sid, "and in read-only")
    assert [r.path for r in other.requests] == ["/v1/messages"]
    assert sent_keys(other) == {ANTHROPIC_KEY}
    assert "OPENAI_API_KEY=***" in request_text(other.requests[0].body)
    assert len(llm_server.requests) == 4 and sent_keys(llm_server) == {OPENAI_KEY}
    assert "Anthropic's key would be ***" in request_text(llm_server.requests[2].body)


def test_an_mcp_tool_s_arguments_and_its_error_echoing_the_key_are_shown_only_hidden(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    """The MCP server is sent the arguments as the model wrote them (the action); what the
    user is shown and what is saved of the call and of the server's error holds `***`."""
    (di_code_home / "config.toml").write_text(toml_table("fx", stdio_server("fx", tmp_path)))
    explode = ToolCallSpec("mcp__fx__explode", {"reason": f"leaking {API_KEY}"}, "c1")
    llm_server.script(Turn(tool_calls=(explode,)), Turn(text="done"))
    done = run_di_code("run", "--yes", "--output-format", "stream-json", "go")
    assert done.returncode == 0, done.stderr
    assert "exploded: leaking" in request_text(llm_server.requests[1].body)
    ended = [e for e in stream_json_lines(done.stdout) if e["type"] == "tool_execution_end"]
    assert "exploded: leaking ***" in json.dumps(ended)
    assert API_KEY not in done.stdout + done.stderr
    [session] = (di_code_home / "sessions").rglob("*.jsonl")
    assert API_KEY not in session.read_text(encoding="utf-8")


# --- programs di-code starts ----------------------------------------------------------------


@pytest.mark.parametrize(
    "sandbox",
    [
        "off",
        pytest.param(
            "workspace-write",
            marks=pytest.mark.skipif(not bubblewrap_works(), reason="bubblewrap does not work"),
        ),
    ],
)
async def test_an_editor_s_terminal_runs_without_any_provider_key_of_the_editor_s_environment(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str],
    di_code_home: Path, sandbox: str,
) -> None:  # fmt: skip
    """The editor runs the command with its own environment: every key variable di-code
    reads (the chosen one, another preset's, a configured `api_key_env`) is taken out."""
    (di_code_home / "config.toml").write_text(
        '[providers.corp]\napi = "openai-completions"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "CORP_TOKEN"\n'
    )
    keys = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "GROQ_API_KEY": ENV_KEY, "CORP_TOKEN": OPENAI_KEY}
    command = "env | grep -c -e sk- > count.txt; true"
    llm_server.script(Turn(tool_calls=(ToolCallSpec("bash", {"command": command}),)), Turn())
    client = TerminalClient({**editor_env, **keys})
    flags = ("--permission-mode", "auto", "--sandbox", sandbox)
    terminal = ClientCapabilities(terminal=True)
    conn = await agent(client, *flags, capabilities=terminal, env_extra=keys)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "run it")
    assert client.terminals, "the command did not run in the editor's terminal"
    assert (workspace / "count.txt").read_text() == "0\n"


def test_a_hook_given_another_provider_s_key_by_the_user_cannot_show_or_send_it(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    """The user's hook names `ANTHROPIC_API_KEY` in its `env` and blocks the call with a
    message holding it: the user is shown `***`, and OpenAI's request holds no such key."""
    script = tmp_path / "block.sh"
    script.write_text('echo "blocked: key $ANTHROPIC_API_KEY" >&2\nexit 2\n')
    (di_code_home / "config.toml").write_text(
        '[[hooks.PreToolUse]]\nmatcher = ""\nhooks = [{ type = "command", '
        f'command = "bash {script}", env = ["ANTHROPIC_API_KEY"] }}]\n'
    )
    llm_server.script(Turn(tool_calls=(ToolCallSpec("ls", {}),)), Turn(text="done"))
    env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}
    done = run_di_code("run", "--output-format", "stream-json", "go", env_extra=env)
    assert done.returncode == 0, done.stderr
    assert "blocked: key ***" in done.stdout
    assert ANTHROPIC_KEY not in done.stdout + done.stderr
    assert "blocked: key ***" in request_text(llm_server.requests[-1].body)


# --- batch ----------------------------------------------------------------------------------


def test_a_batch_patch_and_answer_holding_another_provider_s_key_are_saved_hidden(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    """The batch runs on OpenAI; Anthropic's key (set up, so di-code holds it) is written into
    a file by a task and said in its answer: RESULTS.jsonl, its patch and the logs hide it."""
    make_repo(tmp_path / "repo", {"a.txt": "alpha\n"})
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "repo": "repo", "prompt": "go"}])
    llm_server.script(
        write_call("KEY.md", f"key = {ANTHROPIC_KEY}\n", "w1"),
        Turn(text=f"the key is {ANTHROPIC_KEY}"),
    )
    env = cli_env(di_code_home, llm_server, ANTHROPIC_API_KEY=ANTHROPIC_KEY)
    done = subprocess.run(
        [DI_CODE, "batch", str(tasks), "--out", "results.jsonl", "--jobs", "1", "--events"],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = (tmp_path / "results.jsonl").read_text(encoding="utf-8")
    assert "the key is ***" in results and "+key = ***" in results
    logs = [p for p in (tmp_path / "results.jsonl.work").rglob("*") if p.is_file()]
    written = [p.read_text(encoding="utf-8", errors="replace") for p in logs]
    for text in [results, done.stdout, done.stderr, *written]:
        assert ANTHROPIC_KEY not in text


# --- other spellings ------------------------------------------------------------------------

SLASHED_KEY = "sk-abc/def+ghi/jkl-0666"
"""A key of a base64 alphabet: no piece between its slashes is 12 characters long."""


def test_a_key_spelled_with_escaped_slashes_in_a_json_file_is_hidden_where_it_is_shown(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    """PHP's and Java's JSON write `/` as `\\/`: a config file holding the key so, read by the
    model, is shown in stream-json and saved in the session without the key."""
    (workspace / "conf.json").write_text(json.dumps({"key": SLASHED_KEY}).replace("/", "\\/"))
    read = ToolCallSpec("read", {"path": "conf.json"})
    llm_server.script(Turn(tool_calls=(read,)), Turn(text="ok"))
    env = {"OPENAI_API_KEY": SLASHED_KEY}
    done = run_di_code("run", "--yes", "--output-format", "stream-json", "go", env_extra=env)
    assert done.returncode == 0, done.stderr
    [session] = (di_code_home / "sessions").rglob("*.jsonl")
    for text in (done.stdout, session.read_text(encoding="utf-8")):
        assert "def+ghi" not in text and '{\\"key\\": \\"***\\"}' in text


def test_chat_model_switches_across_providers_send_each_key_only_to_its_url(
    llm_server: LLMServer, other: LLMServer, tmp_path: Path
) -> None:
    """`chat --base-url A --api-key K`, then `/model anthropic/...` (at B, with its own key)
    and `/model openai/test-model` again: K goes only to A, Anthropic's key only to B, and
    neither as text in what the other is sent."""
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={OPENAI_KEY}\n")
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("read", {"path": ".env"}),)),
        Turn(text="first done"),
        Turn(text="third done"),
    )
    other.script(Turn(text=f"second done {ANTHROPIC_KEY}"))
    env = {
        **spawn_env(llm_server),
        "OPENAI_API_KEY": ENV_KEY,
        "OPENAI_BASE_URL": other.openai_base_url,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": other.anthropic_base_url,
    }
    given = ["--base-url", llm_server.openai_base_url, "--api-key", OPENAI_KEY, "--yes"]
    child = pexpect.spawn(
        DI_CODE, ["chat", "--model", "openai/test-model", *given], cwd=str(tmp_path),
        env=env, dimensions=(30, 100), encoding="utf-8", timeout=CHAT_TIMEOUT,
    )  # fmt: skip
    try:
        child.expect("›")
        for line, reply in [
            ("read the env file", "first done"),
            ("/model anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
            ("now on anthropic", "second done"),
            ("/model openai/test-model", "test-model"),
            ("back on openai", "third done"),
        ]:
            child.sendline(line)
            child.expect(reply)
    finally:
        child.close(force=True)
    assert sent_keys(llm_server) == {OPENAI_KEY} and len(llm_server.requests) == 3
    assert sent_keys(other) == {ANTHROPIC_KEY} and len(other.requests) == 1
    assert "OPENAI_API_KEY=***" in request_text(other.requests[0].body)


# --- what a repository names ----------------------------------------------------------------


def project_provider(name: str, url: str) -> tuple[str, str]:
    table = f'[providers."{name}"]\napi = "openai-completions"\nbase_url = "{url}"\n'
    table += 'api_key_env = "OPENAI_API_KEY"\nmodels = ["test-model"]\n'
    return ".di-code/config.toml", f'model = "{name}/test-model"\n{table}'


@pytest.mark.parametrize(
    "planted",
    [
        pytest.param(lambda url: project_provider("corp", url), id="its-own-provider"),
        pytest.param(lambda url: project_provider("OpenAI", url), id="case-twin-provider"),
        pytest.param(
            lambda url: (".claude/settings.json", json.dumps({"env": {"OPENAI_BASE_URL": url}})),
            id="claude-settings-env",
        ),
    ],
)
def test_an_untrusted_repository_cannot_send_the_key_to_its_own_url(
    run_di_code: RunDiCode, llm_server: LLMServer, other: LLMServer, workspace: Path,
    planted: Any,
) -> None:  # fmt: skip
    """The repository names its server in a provider of its own (once trusted, requests go
    there), in a twin of the user's provider, or in Claude Code's spelling (`env` in
    `.claude/settings.json`): untrusted, every request still goes to the user's URL."""
    (workspace / ".git").mkdir()
    path, text = planted(other.openai_base_url)
    (workspace / path).parent.mkdir(parents=True, exist_ok=True)
    (workspace / path).write_text(text)
    llm_server.script(Turn(text="hi"))
    mine = {"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": llm_server.openai_base_url}
    done = run_di_code("run", "go", server=False, env_extra=mine)  # no DI_CODE_MODEL: the
    # project's `model` is the one named, as it would be once trusted
    assert done.returncode == 0, done.stderr
    assert len(llm_server.requests) == 1 and other.requests == []
