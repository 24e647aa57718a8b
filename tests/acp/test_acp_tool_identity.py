"""What a tool is, is not what wraps it (issue 42.1 and 42.3): with language servers off,
found (write and edit are then wrapped for diagnostics) or running (basedpyright, as the dev
extra installs it, on Python files), and with every accepted spelling of the arguments
(Claude Code's `file_path`, `old_string`, `new_string`, opencode's `filePath`, `oldString`,
`newString`), an edit and a write show the editor their title, their file's location and
their diff, and `/undo` restores them through `fs/write_text_file`. Every message is checked
against the ACP v1 schema."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import PROTOCOL_VERSION  # noqa: E402
from acp.schema import ToolCallProgress, ToolCallStart  # noqa: E402
from acp.stdio import spawn_agent_process  # noqa: E402

from tests.cli.conftest import DI_CODE, cli_env  # noqa: E402
from tests.support.acp_agent import server_env  # noqa: E402
from tests.support.acp_agent import stub_gopls as stub_gopls  # noqa: E402
from tests.support.acp_editor import EDITOR_FS, TIMEOUT, SavingEditor, prompt  # noqa: E402
from tests.support.acp_schema import SentMessages  # noqa: E402
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn  # noqa: E402

SPELLINGS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "di-code": (
        {"path": "NOTES", "old_text": "one", "new_text": "uno"},
        {"path": "OLD", "content": "new\n"},
    ),
    "claude-code": (
        {"file_path": "NOTES", "old_string": "one", "new_string": "uno"},
        {"file_path": "OLD", "content": "new\n"},
    ),
    "edits-list": (
        {"file_path": "NOTES", "edits": [{"old_string": "one", "new_string": "uno"}]},
        {"file_path": "OLD", "content": "new\n"},
    ),
    "opencode": (
        {"filePath": "NOTES", "oldString": "one", "newString": "uno"},
        {"filePath": "OLD", "content": "new\n"},
    ),
}
"""An edit of NOTES and a write of OLD, in each spelling (the names filled in per case)."""
SERVERS = {"off": ".txt", "found": ".txt", "basedpyright": ".py"}
"""How language servers are, and the files' suffix: off (DI_CODE_LSP=off), found (a stub
gopls on PATH: write and edit are wrapped, no server starts for a text file), running
(basedpyright checks the Python files edited)."""


def named(arguments: dict[str, Any], suffix: str) -> dict[str, Any]:
    """`arguments` with NOTES and OLD as file names with `suffix`, as deep as they go."""

    def fill(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: fill(item) for key, item in value.items()}
        if isinstance(value, list):
            return [fill(item) for item in value]
        return {"NOTES": f"notes{suffix}", "OLD": f"old{suffix}"}.get(value, value)

    filled: dict[str, Any] = fill(arguments)
    return filled


@pytest.fixture
async def started(
    llm_server: LLMServer, di_code_home: Path, stub_gopls: Path
) -> AsyncIterator[Any]:
    """`await started(client, servers)`: a `di-code acp` asking before edits, with the editor's
    files, language servers as `servers` says (SERVERS)."""
    sent, opened = SentMessages(), []

    async def start(client: Any, servers: str) -> Any:
        extra = server_env(servers, stub_gopls, di_code_home)
        env = cli_env(di_code_home, llm_server, **extra)
        args = ("acp", "--permission-mode", "ask", "--sandbox", "off")
        context = spawn_agent_process(client, DI_CODE, *args, env=env, observers=[sent])
        conn, _ = await context.__aenter__()
        opened.append(context)
        hello = conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=EDITOR_FS)
        await asyncio.wait_for(hello, TIMEOUT)
        return conn

    yield start
    for context in opened:
        await context.__aexit__(None, None, None)
    await asyncio.to_thread(sent.check)


@pytest.mark.parametrize("servers", list(SERVERS))
@pytest.mark.parametrize("spelling", list(SPELLINGS))
async def test_an_edit_and_a_write_show_title_location_diff_and_undo_through_the_editor(
    started: Any, llm_server: LLMServer, workspace: Path, servers: str, spelling: str
) -> None:
    suffix = SERVERS[servers]
    notes, old = workspace / f"notes{suffix}", workspace / f"old{suffix}"
    notes.write_text("one\ntwo\n")
    old.write_text("old\n")
    edit, write = (named(arguments, suffix) for arguments in SPELLINGS[spelling])
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("edit", edit), ToolCallSpec("write", write))),
        Turn(text="done"),
    )
    client = SavingEditor()
    conn = await started(client, servers)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "change them")
    assert notes.read_text() == "uno\ntwo\n" and old.read_text() == "new\n"

    titles = [f"edit: {notes.name}", f"write: {old.name}"]
    asked = [(call.title, [p.path for p in call.locations or []]) for call, _ in client.asked]
    assert asked == [(titles[0], [str(notes)]), (titles[1], [str(old)])]
    starts = client.of(ToolCallStart)
    assert [start.title for start in starts] == titles
    assert [[place.path for place in start.locations or []] for start in starts] == [
        [str(notes)],
        [str(old)],
    ]
    diffs = [
        (block.path, block.old_text, block.new_text)
        for update in client.of(ToolCallProgress)
        for block in update.content or []
        if block.type == "diff"
    ]
    assert diffs == [(str(notes), "one\ntwo\n", "uno\ntwo\n"), (str(old), "old\n", "new\n")]
    ended = [u for u in client.of(ToolCallProgress) if u.status == "completed"]
    assert [[(p.path, p.line) for p in u.locations or []] for u in ended] == [
        [(str(notes), 0)],
        [(str(old), 0)],
    ]
    if servers == "basedpyright":  # the server ran: its word on the edit is in the outcome
        said = [b.content.text for b in ended[0].content or [] if b.type == "content"]
        assert any('"uno" is not defined' in text for text in said), said

    client.writes.clear()
    await prompt(conn, session.session_id, "/undo")
    assert "Undid prompt 1." in client.said()
    assert sorted(client.writes) == [(str(notes), "one\ntwo\n"), (str(old), "old\n")]
    assert "Changed on disk" not in client.said()
    assert notes.read_text() == "one\ntwo\n" and old.read_text() == "old\n"


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_a_loaded_session_shows_each_call_in_its_tools_own_names(
    workspace: Path, spelling: str
) -> None:
    from di_code.acp.updates import EventTranslator
    from di_code.ai.types import AssistantContent, AssistantMessage, ToolCall
    from di_code.tools import default_tools

    edit, write = (named(arguments, ".txt") for arguments in SPELLINGS[spelling])
    calls: list[AssistantContent] = [ToolCall("e1", "edit", edit), ToolCall("w1", "write", write)]
    stored = AssistantMessage(calls, "openai", "test-model")
    replayed = EventTranslator(workspace).replay([stored], default_tools(workspace))
    assert [(u.title, [p.path for p in u.locations or []]) for u in replayed] == [
        ("edit: notes.txt", [str(workspace / "notes.txt")]),
        ("write: old.txt", [str(workspace / "old.txt")]),
    ]
