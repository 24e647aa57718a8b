"""`session/delete` driven by the ACP SDK's own JSON-RPC connection (its `ClientSideConnection`
has no method for it in 0.12.1): a session of the folder `di-code acp` runs in, by its whole
id, not while open, goes with its undo data; every message sent is checked against ACP v1."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import RequestError  # noqa: E402

from di_code.session import SessionStore  # noqa: E402
from tests.support.acp_editor import Editor  # noqa: E402
from tests.support.acp_editor import editor as editor  # noqa: E402
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn  # noqa: E402


def git(workspace: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=workspace, capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout


def write(path: str, content: str) -> Turn:
    return Turn(tool_calls=(ToolCallSpec("write", {"path": path, "content": content}),))


async def test_delete_removes_the_session_and_its_undo_data_in_git(
    editor: Editor, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    git(workspace, "init", "-q")
    (workspace / "notes.txt").write_text("one\n")
    llm_server.script(write("notes.txt", "two\n"), Turn(text="written"))
    session_id = await editor.new(workspace)
    await editor.prompt(session_id, "write it")
    [path] = SessionStore(di_code_home).directory(workspace).glob(f"*_{session_id}.jsonl")
    assert session_id in git(workspace, "for-each-ref", "refs/di-code/")

    with pytest.raises(RequestError) as refused:  # open here: close it first
        await editor.ask("session/delete", sessionId=session_id)
    assert refused.value.code == -32600 and "close it first" in str(refused.value.data)
    await editor.ask("session/close", sessionId=session_id)
    with pytest.raises(RequestError) as refused:  # the whole id only
        await editor.ask("session/delete", sessionId=session_id[:8])
    assert refused.value.code == -32602 and path.exists()

    assert await editor.ask("session/delete", sessionId=session_id) == {}
    assert not path.exists()
    assert git(workspace, "for-each-ref", "refs/di-code/") == ""
    listed = await editor.ask("session/list", cwd=str(workspace))
    assert listed["sessions"] == []
    with pytest.raises(RequestError):
        await editor.ask("session/resume", cwd=str(workspace), sessionId=session_id)
    with pytest.raises(RequestError) as again:
        await editor.ask("session/delete", sessionId=session_id)
    assert again.value.code == -32602
    assert (workspace / "notes.txt").read_text() == "two\n"  # the files are the user's


async def test_delete_removes_the_backups_and_outputs_beside_the_session_outside_git(
    editor: Editor, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    (workspace / "notes.txt").write_text("one\n")
    long_output = ToolCallSpec("bash", {"command": "seq 1 200000"})
    llm_server.script(
        write("notes.txt", "two\n"), Turn(tool_calls=(long_output,)), Turn(text="written")
    )
    session_id = await editor.new(workspace)
    await editor.prompt(session_id, "write it")
    await editor.ask("session/close", sessionId=session_id)
    folder = SessionStore(di_code_home).directory(workspace)
    [backups] = folder.glob(f"*_{session_id}.checkpoints")
    [outputs] = folder.glob(f"*_{session_id}.bash-output")
    assert any(backups.rglob("*")) and any(outputs.iterdir())

    assert await editor.ask("session/delete", sessionId=session_id) == {}
    assert list(folder.iterdir()) == []


async def test_only_a_session_of_the_agents_folder_is_deleted(
    editor: Editor, workspace: Path, tmp_path: Path, di_code_home: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    session = SessionStore(di_code_home).create(other)
    session.append_model_change("openai", "test-model")
    with pytest.raises(RequestError) as refused:
        await editor.ask("session/delete", sessionId=session.id)
    assert refused.value.code == -32602 and "belongs to" in str(refused.value.data)
    assert session.path.exists()
    with pytest.raises(RequestError) as refused:
        await editor.ask("session/delete", sessionId="../../x")
    assert refused.value.code == -32602
    with pytest.raises(RequestError) as refused:
        await editor.ask("session/delete")
    assert refused.value.code == -32602
