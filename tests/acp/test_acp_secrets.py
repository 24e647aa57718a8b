"""Issue 40 item 5 over ACP: the provider key, planted in an answer, a tool result, tool
arguments, an error and a permission request, reaches the editor only as `***`, as it reaches
`run`'s output and the session file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp.schema import ClientCapabilities, FileSystemCapabilities  # noqa: E402

from tests.cli.conftest import API_KEY  # noqa: E402
from tests.support.acp_editor import (  # noqa: E402
    EditorClient,
    RecordingClient,
    TerminalClient,
    prompt,
)
from tests.support.llm_server import HttpError, LLMServer, ToolCallSpec, Turn  # noqa: E402


def everything(client: RecordingClient) -> str:
    """Every update and permission question the editor received, as JSON text."""
    sent = [update.model_dump_json() for _, update in client.updates]
    asked = [call.model_dump_json() for call, _ in client.asked]
    return "\n".join(sent + asked)


async def test_the_key_reaches_the_editor_only_hidden(
    agent: Any, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    (workspace / "key.txt").write_text(f"the key: {API_KEY}\n")
    llm_server.script(
        Turn(
            text=f"planting {API_KEY} in the answer",
            tool_calls=(ToolCallSpec("read", {"path": "key.txt"}),),
        ),
        Turn(tool_calls=(ToolCallSpec("bash", {"command": f"echo {API_KEY} > out.txt"}),)),
        Turn(text="done"),
        HttpError(401, f"Incorrect API key provided: {API_KEY}"),
    )
    client = RecordingClient("allow_once")
    log = workspace.parent / "acp.log"
    conn = await agent(client, "--permission-mode", "ask", "--log", str(log))
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "go")
    await prompt(conn, session.session_id, "again")
    assert client.asked, "no permission request was made"
    text = everything(client)
    assert "***" in text
    assert API_KEY not in text
    assert "planting *** in the answer" in client.said()
    assert API_KEY not in client.said()
    assert "Incorrect API key provided: ***" in client.said()
    assert API_KEY not in log.read_text(encoding="utf-8")
    sessions = list((di_code_home / "sessions").rglob("*.jsonl"))
    assert sessions and API_KEY not in sessions[0].read_text(encoding="utf-8")


async def test_an_edit_of_a_file_holding_the_key_keeps_it_in_the_buffer(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    """Writing a file through the editor is the model's action, not something shown: the key
    in the file stays the key (an edit must not destroy it), and the diff shows `***`."""
    env_file = workspace / ".env.example"
    env_file.write_text("")
    buffers = {str(env_file): f"MODE=dev\nOPENAI_API_KEY={API_KEY}\n"}
    edit = {"path": ".env.example", "edits": [{"old_text": "dev", "new_text": "prod"}]}
    llm_server.script(Turn(tool_calls=(ToolCallSpec("edit", edit),)), Turn(text="done"))
    client = EditorClient(buffers)
    fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
    conn = await agent(client, "--permission-mode", "auto", capabilities=ClientCapabilities(fs=fs))
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "switch to prod")
    assert buffers[str(env_file)] == f"MODE=prod\nOPENAI_API_KEY={API_KEY}\n"
    text = everything(client)
    assert "OPENAI_API_KEY=***" in text and API_KEY not in text


async def test_a_command_holding_the_key_runs_as_written_in_the_editors_terminal(
    agent: Any, llm_server: LLMServer, workspace: Path, editor_env: dict[str, str]
) -> None:
    """The terminal runs the model's command as bash would; the editor is shown it hidden."""
    command = f"echo {API_KEY} > out.txt"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": command}),)), Turn(text="ok")
    )
    client = TerminalClient(editor_env)
    terminal = ClientCapabilities(terminal=True)
    conn = await agent(
        client, "--permission-mode", "ask", "--sandbox", "off", capabilities=terminal
    )
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "run it")
    assert (workspace / "out.txt").read_text() == f"{API_KEY}\n"
    text = everything(client)
    assert "echo *** > out.txt" in text and API_KEY not in text
