"""What `di-code acp` does as the chat does, checked against issue 26's list: `/undo` from the
editor, an untrusted project's settings held back and said, usage, the lines of locations,
and stdin closed mid-turn leaving nothing running."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import (  # noqa: E402
    PROTOCOL_VERSION,
    RequestError,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    text_block,
)
from acp.schema import (  # noqa: E402
    AgentThoughtChunk,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
)

from tests.cli.conftest import DI_CODE, cli_env  # noqa: E402
from tests.support.acp_editor import TIMEOUT, RecordingClient, prompt  # noqa: E402
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn  # noqa: E402


def edit(path: str, old: str, new: str) -> Turn:
    call = ToolCallSpec("edit", {"path": path, "edits": [{"old_text": old, "new_text": new}]})
    return Turn(tool_calls=(call,))


async def test_undo_from_the_editor_restores_the_files_and_tells_the_model(
    agent: Any, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("one\n")
    llm_server.script(edit("notes.txt", "one", "two"), Turn(text="edited"))
    client = RecordingClient()
    conn = await agent(client, "--permission-mode", "auto")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert {"compact", "undo"} <= {c.name for c in await client.offered()}
    await prompt(conn, session.session_id, "edit it")
    assert notes.read_text() == "two\n"

    reply = await prompt(conn, session.session_id, "/undo")
    assert reply.stop_reason == "end_turn"
    assert notes.read_text() == "one\n"
    assert "Undid prompt 1." in client.said()
    assert len(llm_server.requests) == 2  # the command is di-code's: no model request

    llm_server.script(Turn(text="ok"))
    await prompt(conn, session.session_id, "what now?")
    sent = llm_server.requests[-1].body["messages"][-1]
    assert "the user undid the file changes since prompt 1" in json.dumps(sent)
    assert "what now?" in json.dumps(sent)
    listed = await asyncio.to_thread(  # the test's own loop goes on while undo lists
        subprocess.run,
        [DI_CODE, "undo", "--list"],
        cwd=workspace,
        env=cli_env(di_code_home, llm_server),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    # the list shows what the user typed, not the note di-code put before it
    rows = [row[19:] for row in listed.stdout.splitlines()[:2]]
    assert rows == ["edit it  (files undone)", "what now?"], listed.stdout


async def test_an_untrusted_projects_settings_are_held_back_and_said(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code" / "config.toml").write_text('[permissions]\nallow = ["bash"]\n')
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "echo hi"}),)), Turn(text="ok")
    )
    client = RecordingClient(answer="reject_once")
    conn = await agent(client, "--permission-mode", "ask", "--sandbox", "off")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "run it")
    said = client.said()
    assert "ignored until you trust this project (di-code trust): permissions.allow" in said
    assert said.index("ignored until") < said.index("ok")  # said before the answer
    assert len(client.asked) == 1  # the project's allow rule was not applied


async def test_usage_is_reported_with_each_prompt(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(
        Turn(
            tool_calls=(ToolCallSpec("ls", {}),),
            input_tokens=100,
            output_tokens=10,
        ),
        Turn(text="done", input_tokens=150, output_tokens=5),
    )
    client = RecordingClient()
    conn = await agent(client)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    reply = await prompt(conn, session.session_id, "list")
    [update] = client.of(UsageUpdate)  # once per prompt: how full the context is now
    assert update.used == 155 and update.size > 0
    usage = reply.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (250, 15, 265)


async def test_read_and_edit_locations_carry_their_lines(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("read", {"path": "long.txt", "offset": 4}, "r1"),)),
        Turn(
            tool_calls=(
                ToolCallSpec(
                    "edit",
                    {"path": "long.txt", "edits": [{"old_text": "line 7", "new_text": "seven"}]},
                    "e1",
                ),
            )
        ),
        Turn(text="done"),
    )
    client = RecordingClient()
    conn = await agent(client, "--permission-mode", "auto")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "read and edit")
    [read] = [u for u in client.of(ToolCallStart) if u.tool_call_id == "r1"]
    assert read.locations[0].line == 3  # the tool's line 4, counted from 0
    [edited] = [u for u in client.of(ToolCallProgress) if u.tool_call_id == "e1" and u.locations]
    assert (edited.locations[0].path, edited.locations[0].line) == (
        str(workspace / "long.txt"),
        6,
    )


async def test_stdin_closed_mid_turn_ends_the_process_and_its_command(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    pid_file = workspace / "pid"
    command = f"echo $$ > {pid_file}; sleep 60"
    llm_server.script(Turn(tool_calls=(ToolCallSpec("bash", {"command": command}),)))
    process = await asyncio.create_subprocess_exec(
        DI_CODE, "acp", "--permission-mode", "auto", "--sandbox", "off",
        env=cli_env(di_code_home, llm_server), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    requests = [
        ("initialize", {"protocolVersion": PROTOCOL_VERSION}),
        ("session/new", {"cwd": str(workspace), "mcpServers": []}),
    ]
    for number, (method, params) in enumerate(requests):
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method,
                                        "params": params}).encode() + b"\n")  # fmt: skip
        while (reply := json.loads(await process.stdout.readline())).get("id") != number:
            pass
    turn = {"sessionId": reply["result"]["sessionId"], "prompt": [text_block("go").model_dump()]}
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "session/prompt",
                                    "params": turn}).encode() + b"\n")  # fmt: skip
    for _ in range(400):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.05)
    pid = int(pid_file.read_text())
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie (an orphan may wait to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


async def test_skills_are_offered_as_commands_and_ask_the_model_to_follow_them(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    folder = workspace / ".di-code" / "skills" / "release"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: release\ndescription: Cut a release\n---\nSteps\n")
    llm_server.script(Turn(text="releasing"))
    client = RecordingClient()
    conn = await agent(client)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    [release] = [c for c in await client.offered() if c.name == "release"]
    assert release.description == "Cut a release"
    await prompt(conn, session.session_id, "/release v2.0")
    asked = json.dumps(llm_server.requests[0].body["messages"][-1])
    assert "Use the skill release" in asked and "v2.0" in asked
    assert str(folder / "SKILL.md") in asked


PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9"
    "awAAAABJRU5ErkJggg=="
)
"""A 1x1 PNG."""


async def test_a_prompt_with_a_mention_a_link_and_an_image_and_a_thinking_answer(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("saved on disk\n")
    llm_server.script(Turn(thinking="let me look", text="seen"))
    client = RecordingClient()
    conn = await agent(client, "--model", "openai/gpt-4.1")  # a model with image input
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    blocks = [
        text_block("compare"),
        resource_block(embedded_text_resource(notes.as_uri(), "unsaved in the editor\n")),
        resource_link_block("other.txt", (workspace / "other.txt").as_uri()),
        image_block(PIXEL, "image/png"),
    ]
    reply = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=blocks), 30)
    assert reply.stop_reason == "end_turn"
    sent = json.dumps(llm_server.requests[0].body["messages"][-1])
    assert "compare" in sent
    assert "unsaved in the editor" in sent and "saved on disk" not in sent  # the editor's text
    assert f'<file path=\\"{notes}\\">' in sent
    assert f"[other.txt]({workspace / 'other.txt'})" in sent  # a link: the model reads it
    assert f"data:image/png;base64,{PIXEL}" in sent
    thought = "".join(u.content.text for u in client.of(AgentThoughtChunk))
    assert (thought, client.said()) == ("let me look", "seen")


async def test_an_image_for_a_text_only_model_is_refused_before_any_request(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    client = RecordingClient()
    conn = await agent(client)  # openai/test-model: unknown, so text only
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    blocks = [text_block("what is this?"), image_block(PIXEL, "image/png")]
    reply = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=blocks), 30)
    assert reply.stop_reason == "refusal"
    assert client.said() == (
        "di-code: openai/test-model does not accept images (1 attached); "
        "use a model with image input\n"
    )
    assert llm_server.requests == []


async def test_set_mode_switches_what_runs_unasked(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("one\n")
    llm_server.script(edit("notes.txt", "one", "two"), Turn(text="edited"))
    client = RecordingClient(answer="reject_once")
    conn = await agent(client, "--permission-mode", "ask")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert session.modes.current_mode_id == "ask"
    await conn.set_session_mode(session_id=session.session_id, mode_id="accept-edits")
    await prompt(conn, session.session_id, "edit")
    assert client.asked == [] and notes.read_text() == "two\n"
    with pytest.raises(RequestError):
        await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")


async def test_custom_commands_expand_and_compact_is_di_codes(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    commands = workspace / ".di-code" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\ndescription: Review a file\n---\nReview $ARGUMENTS")
    llm_server.script(Turn(text="looks fine"))
    client = RecordingClient()
    conn = await agent(client)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert "review" in {c.name for c in await client.offered()}
    await prompt(conn, session.session_id, "/review app.py")
    assert "Review app.py" in json.dumps(llm_server.requests[0].body["messages"][-1])
    reply = await prompt(conn, session.session_id, "/compact")
    assert reply.stop_reason == "end_turn"
    assert client.said().endswith("di-code: Not compacted: Nothing to compact\n")
    assert len(llm_server.requests) == 1  # one short turn: nothing to summarize
