"""chat's `/rewind N files` (README, "Undo") attacked with what the prompt's bash leaves: a
name holding a terminal escape and a line break, and a tracked file swapped for a hard link to
a file outside the workspace. In a real pseudo-terminal, against the loopback model."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

from tests.support.chat import DI_CODE, chatting, say
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def test_rewind_files_restores_in_place_of_a_hard_link_and_prints_no_escape(
    llm_server: LLMServer, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    workspace = tmp_path
    outside = tmp_path_factory.mktemp("home") / "bashrc"
    outside.write_text("export SAFE=1\n")
    (workspace / "notes.txt").write_text("the user's notes\n")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
                 "commit", "-qm", "first"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=workspace, check=True, timeout=30)
    command = (
        f"rm notes.txt && ln {outside} notes.txt && "
        "touch \"$(printf 't\\033]0;pwned\\007')\" \"$(printf 'x\\ndeleted .env')\""
    )
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": command}, "c1"),)),
        Turn(text="Linked it."),
    )
    with chatting(llm_server, workspace, "--yes", "--sandbox", "off") as child:
        say(child, "link the notes", "Linked it")
        assert (workspace / "notes.txt").stat().st_ino == outside.stat().st_ino
        child.logfile_read = io.StringIO()  # everything the rewind prints
        say(child, "/rewind 1 files", "restored notes.txt")
        child.expect("›")
        shown = child.logfile_read.getvalue()
    assert outside.read_text() == "export SAFE=1\n"
    assert (workspace / "notes.txt").read_text() == "the user's notes\n"
    assert sorted(p.name for p in workspace.iterdir()) == [".git", "notes.txt"]
    assert "\x1b]0;pwned" not in shown and "\x07" not in shown
    assert "\ndeleted .env" not in shown.replace("\r", "")
