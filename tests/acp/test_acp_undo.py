"""`/undo` from an editor and its buffers (issue 35, item 4), driven by the ACP SDK's own client:
with the editor's file system, a restored text file goes through `fs/write_text_file` (so an
open buffer gets it); what cannot (a deletion, bytes that are not text) is undone on disk and
named, as every file is without the editor's file system, so the editor can reload it."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import RequestError  # noqa: E402

from tests.support.acp_editor import (  # noqa: E402
    EDITOR_FS,
    TIMEOUT,
    RecordingClient,
    SavingEditor,
    UnsavedEditor,
    calls,
    edit,
    prompt,
    saving_session,
)
from tests.support.llm_server import LLMServer, Turn  # noqa: E402


def write(path: str, content: str) -> tuple[str, dict[str, Any]]:
    return "write", {"path": path, "content": content}


async def test_undo_restores_text_through_the_editors_buffers(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    # the repository is the workspace's parent: undo reaches a file outside the workspace
    subprocess.run(["git", "init", "-q"], cwd=workspace.parent, check=True, timeout=30)
    notes, new, data = workspace / "notes.txt", workspace / "new.txt", workspace / "data.bin"
    outside = workspace.parent / "outside.txt"
    notes.write_text("one\r\ntwo\n")
    data.write_bytes(b"\xff\x00old")
    data.chmod(0o600)
    outside.write_text("theirs\n")
    llm_server.script(
        calls(edit("notes.txt", "one", "uno"), write("new.txt", "fresh\n")),
        calls(("bash", {"command": "printf 'new' > data.bin; printf 'x\\n' > ../outside.txt"})),
        Turn(text="done"),
    )
    client, conn, session_id = await saving_session(agent, workspace)
    await prompt(conn, session_id, "change them")
    assert notes.read_bytes() == b"uno\r\ntwo\n" and new.exists()
    client.writes.clear()

    reply = await prompt(conn, session_id, "/undo")
    assert reply.stop_reason == "end_turn"
    said = client.said()
    assert "Undid prompt 1." in said, said
    # the text went through the editor, byte for byte; the disk and the editor agree
    assert client.writes == [(str(notes), "one\r\ntwo\n")]
    assert notes.read_bytes() == b"one\r\ntwo\n"
    # a deletion, bytes that are not UTF-8 and a file outside the workspace (the editor is
    # asked for none of them, as for the write tool) are undone on disk, named for a reload
    assert not new.exists()
    assert data.read_bytes() == b"\xff\x00old" and data.stat().st_mode & 0o777 == 0o600
    assert outside.read_text() == "theirs\n"
    [line] = [line for line in said.splitlines() if line.startswith("Changed on disk")]
    assert all(str(path) in line for path in (new, data, outside)) and str(notes) not in line


async def test_without_the_editors_files_the_answer_names_each_file_changed(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("one\n")
    llm_server.script(calls(edit("notes.txt", "one", "two")), Turn(text="edited"))
    client = RecordingClient()
    conn = await agent(client, "--permission-mode", "auto")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "edit it")
    await prompt(conn, session.session_id, "/undo")
    assert notes.read_text() == "one\n"
    said = client.said()
    assert f"Changed on disk (reload them where they are open): {notes}" in said, said


class LineEndingEditor(SavingEditor):
    """An editor that saves its buffers with its own line ends."""

    async def write_text_file(self, session_id: str, path: str, content: str, **kw: Any) -> Any:
        return await super().write_text_file(session_id, path, content.replace("\r\n", "\n"))


async def test_an_editor_that_changes_the_bytes_does_not_break_the_undo(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_bytes(b"one\r\ntwo\r\n")
    llm_server.script(calls(edit("notes.txt", "one", "uno")), Turn(text="edited"))
    client = LineEndingEditor()
    conn = await agent(client, "--permission-mode", "auto", capabilities=EDITOR_FS)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "edit it")
    client.writes.clear()
    await prompt(conn, session.session_id, "/undo")
    assert [path for path, _ in client.writes] == [str(notes)]  # the editor was asked first
    assert notes.read_bytes() == b"one\r\ntwo\r\n"  # then the disk got the exact bytes
    said = client.said()
    assert f"Changed on disk (reload them where they are open): {notes}" in said, said


async def test_a_buffer_with_unsaved_typing_is_not_overwritten_by_the_undo(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    notes, other = workspace / "notes.txt", workspace / "other.txt"
    notes.write_text("one\n")
    other.write_text("a\r\nb\r\n")
    llm_server.script(
        calls(edit("notes.txt", "one", "two"), edit("other.txt", "a", "c")), Turn(text="ok")
    )
    client = UnsavedEditor()
    conn = await agent(client, "--permission-mode", "auto", capabilities=EDITOR_FS)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "edit them")
    client.writes.clear()
    client.unsaved[str(notes)] = "two\nmine\n"  # typed, not saved
    client.unsaved[str(other)] = "c\nb\n"  # saved, shown with the editor's line ends
    await prompt(conn, session.session_id, "/undo")
    assert client.unsaved == {str(notes): "two\nmine\n"}  # the user's typing is kept
    assert client.writes == [(str(other), "a\r\nb\r\n")]
    assert notes.read_text() == "one\n"  # the disk is undone, and the file named
    said = client.said()
    assert f"Changed on disk (reload them where they are open): {notes}" in said, said


class SlowEditor(SavingEditor):
    """An editor that writes only once `release` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.writing = asyncio.Event()
        self.release = asyncio.Event()

    async def write_text_file(self, session_id: str, path: str, content: str, **kw: Any) -> Any:
        self.writing.set()
        await self.release.wait()
        return await super().write_text_file(session_id, path, content, **kw)


async def test_no_prompt_runs_while_the_undo_writes(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("one\n")
    llm_server.script(calls(edit("notes.txt", "one", "two")), Turn(text="ok"))
    client = SlowEditor()
    client.release.set()
    conn = await agent(client, "--permission-mode", "auto", capabilities=EDITOR_FS)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "edit it")
    client.writing.clear()
    client.release.clear()
    undoing = asyncio.create_task(prompt(conn, session.session_id, "/undo"))
    await asyncio.wait_for(client.writing.wait(), TIMEOUT)
    with pytest.raises(RequestError) as refused:
        await prompt(conn, session.session_id, "edit it again")
    assert "a prompt is already running" in str(refused.value.data)
    client.release.set()
    assert (await undoing).stop_reason == "end_turn"
    assert notes.read_text() == "one\n" and len(llm_server.requests) == 2


async def test_undo_through_the_editor_never_follows_a_link_the_model_planted(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    """Issue 40: the model swaps a.txt for a link to b.txt and c.txt for one to .git/config;
    `/undo` asked the editor to write b.txt (the user's text lost) and .git/config (with a
    `core.fsmonitor` the user's next `git status` ran). A link is a link: the editor is
    asked for neither, the links are replaced by the files they were."""
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True, timeout=30)
    a, b, c = workspace / "a.txt", workspace / "b.txt", workspace / "c.txt"
    config = workspace / ".git" / "config"
    a.write_text("user a\n")
    b.write_text("the user's b\n")
    planted = "[core]\n\tfsmonitor = touch pwned\n"
    swap = "rm a.txt c.txt && ln -s b.txt a.txt && ln -s .git/config c.txt"
    llm_server.script(
        calls(write("c.txt", planted)),
        Turn(text="wrote"),
        calls(edit("a.txt", "user", "model"), ("bash", {"command": swap})),
        Turn(text="swapped"),
    )
    client, conn, session_id = await saving_session(agent, workspace)
    await prompt(conn, session_id, "write c")
    await prompt(conn, session_id, "swap them")
    assert a.is_symlink() and c.is_symlink()
    config_before = config.read_bytes()
    client.writes.clear()

    await prompt(conn, session_id, "/undo")
    said = client.said()
    assert "Undid prompt 2." in said, said
    written = [path for path, _ in client.writes]
    assert str(b) not in written and str(config) not in written, written
    assert b.read_text() == "the user's b\n" and config.read_bytes() == config_before
    assert not a.is_symlink() and a.read_text() == "user a\n"
    assert not c.is_symlink() and c.read_text() == planted
    [line] = [line for line in said.splitlines() if line.startswith("Changed on disk")]
    assert str(a) in line and str(c) in line, line
