"""ACP `/undo` (README, "Editors (ACP)" and the Threat model's "Undo" row: a file goes to the
editor only at its own real path) attacked with a hard link: the editor's own write, in place,
would put the restored text into every name of the inode, one of them outside the workspace."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from tests.acp.conftest import agent as agent
from tests.acp.conftest import workspace as workspace
from tests.support.acp_editor import calls, edit, prompt, saving_session
from tests.support.llm_server import LLMServer, Turn


async def test_undo_never_hands_the_editor_a_file_hard_linked_to_one_outside(
    agent: Any, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    """The model edits notes.txt, then its bash swaps it for a hard link to the user's
    ~/.bashrc. `/undo` restores notes.txt: the editor (which writes in place, as editors
    do) must not be asked for it, or ~/.bashrc gets the notes; the name is replaced on disk."""
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True, timeout=30)
    notes = workspace / "notes.txt"
    notes.write_text("the user's notes\n")
    bashrc = tmp_path / "bashrc"
    bashrc.write_text("export SAFE=1\n")
    llm_server.script(
        calls(edit("notes.txt", "user's", "model's")),
        calls(("bash", {"command": f"rm notes.txt && ln {bashrc} notes.txt"})),
        Turn(text="done"),
    )
    client, conn, session_id = await saving_session(agent, workspace)
    await prompt(conn, session_id, "change and link")
    assert os.stat(notes).st_ino == os.stat(bashrc).st_ino
    client.writes.clear()

    await prompt(conn, session_id, "/undo")
    assert "Undid prompt 1." in client.said(), client.said()
    assert bashrc.read_text() == "export SAFE=1\n"
    assert notes.read_text() == "the user's notes\n"
    assert str(notes) not in [path for path, _ in client.writes]
