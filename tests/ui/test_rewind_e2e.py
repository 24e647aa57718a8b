"""`/undo` and `/rewind` in `di-code chat`, in a real pseudo-terminal."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pexpect
import pytest

from tests.support.approval import GUARD_WAIT
from tests.support.chat import DI_CODE, chatting, say, spawn_chat
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def write(path: str, content: str, call_id: str) -> Turn:
    return Turn(tool_calls=(ToolCallSpec("write", {"path": path, "content": content}, call_id),))


def test_rewind_to_the_first_prompt_restores_files_and_conversation(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("original\n")
    llm_server.script(
        write("notes.txt", "first change\n", "c1"),
        Turn(text="Changed it once."),
        write("extra.txt", "new file\n", "c2"),
        Turn(text="Added a file."),
        Turn(text="Starting over."),
    )
    with chatting(llm_server, tmp_path, "--yes") as child:
        say(child, "change the notes", "Changed it once")
        say(child, "add a file", "Added a file")
        say(child, "/rewind", "change the notes")
        say(child, "/rewind 1", "back to before prompt 1")
        assert (tmp_path / "notes.txt").read_text() == "original\n"
        assert not (tmp_path / "extra.txt").exists()
        say(child, "try something else", "Starting over")
    last = json.dumps(llm_server.requests[-1].body)
    assert "try something else" in last
    assert "change the notes" not in last and "add a file" not in last


def test_undo_takes_back_the_last_prompt(llm_server: LLMServer, tmp_path: Path) -> None:
    llm_server.script(write("made.txt", "x\n", "c1"), Turn(text="Made it."))
    with chatting(llm_server, tmp_path, "--yes") as child:
        say(child, "make a file", "Made it")
        assert (tmp_path / "made.txt").exists()
        say(child, "/undo", "delete made.txt", "Undo this")
        assert (tmp_path / "made.txt").exists()  # not before the user says yes
        child.expect(pexpect.TIMEOUT, timeout=GUARD_WAIT)  # keys answer after the guard delay
        child.send("y")
        child.expect("deleted made.txt")
        child.expect("Undid prompt 1")
        assert not (tmp_path / "made.txt").exists()
        say(child, "/undo", "Nothing to undo")


def test_undo_list_shows_what_the_user_typed_and_marks_changes(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """A `!command` before a prompt is listed as typed, not as the output it put before it."""
    llm_server.script(Turn(text="Nothing to do."), write("made.txt", "x\n", "c1"), Turn(text="Ok."))
    with chatting(llm_server, tmp_path, "--yes") as child:
        say(child, "just a question", "Nothing to do")
        say(child, "!echo listing-$((6*7))", "listing-42")  # the output, not the echo
        say(child, "make a file", "Ok.")
    listed = subprocess.run(
        [str(DI_CODE), "undo", "--list"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    rows = [row[17:] for row in listed.stdout.splitlines()[:2]]
    assert rows == ["  just a question", "* !echo listing-$((6*7)) make a file"], listed.stdout


def test_the_model_is_told_what_undo_and_rewind_files_restored(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("original\n")
    llm_server.script(
        write("made.txt", "x\n", "c1"),
        Turn(text="Made it."),
        Turn(text="Noted the undo."),
        write("notes.txt", "changed\n", "c2"),
        Turn(text="Changed the notes."),
        Turn(text="Noted the rewind."),
    )
    with chatting(llm_server, tmp_path, "--yes") as child:
        say(child, "make a file", "Made it")
        say(child, "/undo --yes", "deleted made.txt")
        say(child, "is it there?", "Noted the undo")
        say(child, "change the notes", "Changed the notes")
        say(child, "/rewind 3 files", "restored notes.txt")
        say(child, "and now?", "Noted the rewind")
    after_undo = llm_server.requests[2].body["messages"][-1]["content"]
    assert after_undo == (
        "[Note from di-code: the user undid the file changes since prompt 1: deleted made.txt. "
        "Edits made since then no longer stand.]\n\nis it there?"
    )
    after_rewind = llm_server.requests[5].body["messages"][-1]["content"]
    assert after_rewind.startswith("[Note from di-code: the user undid the file changes since")
    assert "prompt 3: restored notes.txt." in after_rewind
    assert after_rewind.endswith("\n\nand now?")


def test_the_notes_for_the_model_are_not_shown_as_what_the_user_typed(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """After `!command` and /undo the next prompt carries their notes to the model; the echo
    of the prompt, a resumed chat and the checkpoint list show only what the user typed."""
    llm_server.script(write("made.txt", "x\n", "c1"), Turn(text="Made it."), Turn(text="Gone."))
    child = spawn_chat(llm_server, tmp_path, "--yes", rows=60)
    screen = tall_screen(child)
    try:
        screen.wait_for("›")
        child.sendline("make a file")
        screen.wait_for("Made it.")
        child.sendline("!echo listing")
        screen.wait_for("│ listing")  # its output (the write's panel closed with ╰ already)
        child.sendline("/undo --yes")
        screen.wait_for("Undid prompt 1.")
        child.sendline("is it there?")
        screen.wait_for("Gone.")
        assert "› is it there?" in screen.text
        assert "in the shell myself" not in screen.text
        assert "Note from di-code" not in screen.text
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    sent = llm_server.requests[-1].body["messages"][-1]["content"]
    assert sent.startswith("I ran `echo listing` in the shell myself.") and "undid" in sent

    listed = subprocess.run(
        [str(DI_CODE), "undo", "--list"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    rows = [row[17:] for row in listed.stdout.splitlines()[:2]]
    assert rows == ["* make a file  (files undone)", "  !echo listing is it there?"], listed.stdout

    resumed = spawn_chat(llm_server, tmp_path, "--yes", "-c", rows=60)
    again = tall_screen(resumed)
    try:
        again.wait_for("resumed")
        assert "› is it there?" in again.text
        assert "Note from di-code" not in again.text
    finally:
        resumed.close(force=True)


def tall_screen(child: pexpect.spawn) -> Screen:
    screen = Screen(child, 60)
    return screen
