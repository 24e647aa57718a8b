"""The file tools (read, write, edit) attacked as a hostile model, repository or user would
(HOSTILE.md: work that does not end, text from outside, names and paths), through real
`di-code` processes: a chat in a pseudo-terminal, `run`, and `di-code acp` driven by the ACP
SDK's own client against a loopback model server."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pexpect
import pytest
from acp.schema import ToolCallProgress

from di_code.ui.approval_view import fit
from di_code.ui.tool_view import diff_text
from tests.acp.conftest import agent as agent
from tests.cli.conftest import RunDiCode, cli_env, request_text
from tests.cli.conftest import run_di_code as run_di_code  # the fixtures, for this folder too
from tests.cli.conftest import workspace as workspace
from tests.support.acp_editor import EDITOR_FS, SavingEditor, prompt, saving_session
from tests.support.approval import GUARD_WAIT
from tests.support.big_files import LIVENESS
from tests.support.chat import DI_CODE, open_chat, spawn_chat
from tests.support.git import git
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen

STOP_BOUND = 8.0
"""Seconds from the key to the turn's end: generous on a loaded machine; what is caught is a
turn that waits for the whole work (tens of seconds here)."""


def lines_of(count: int) -> list[str]:
    """Distinct lines, each long enough that finding one is real work."""
    return [f"line {i:08d} " + "x" * 80 for i in range(count)]


def many_edits(path: str, lines: list[str]) -> ToolCallSpec:
    """One edit call that replaces every line on its own: work that grows with the number of
    edits times the file's size."""
    edits = [{"old_text": line, "new_text": line.upper()} for line in lines]
    return ToolCallSpec("edit", {"path": path, "edits": edits}, "many")


def test_an_edit_of_thousands_of_replacements_is_refused_at_once_saying_how_many_fit(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """8,000 edits of a 760 KB file took 22 s of CPU (each edit scans the whole file)."""
    lines = lines_of(8000)
    text = "\n".join(lines) + "\n"
    (workspace / "big.txt").write_text(text)
    llm_server.script(
        Turn(tool_calls=(many_edits("big.txt", lines),), chunk_size=1 << 20), Turn(text="ok")
    )
    started = time.monotonic()
    done = run_di_code("run", "--permission-mode", "auto", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < LIVENESS
    result = request_text(llm_server.requests[1].body)
    assert "8000 edits are too many for one call on big.txt" in result
    assert "send at most 1315 edits per call" in result
    assert (workspace / "big.txt").read_text() == text


@pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")
def test_esc_during_an_edit_of_many_replacements_ends_the_turn_and_writes_nothing(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """Under the bound, 1,300 edits of a 760 KB file are seconds of work on a thread: the
    stop used to wait for all of it, and the file was written after the user stopped."""
    lines = lines_of(8000)
    text = "\n".join(lines) + "\n"
    (tmp_path / "big.txt").write_text(text)
    llm_server.script(
        Turn(tool_calls=(many_edits("big.txt", lines[:1300]),), chunk_size=1 << 20),
        Turn(text="stopped, fine"),
    )
    child, screen = open_chat(llm_server, tmp_path, "--permission-mode", "auto")
    try:
        child.sendline("upper-case the lines")
        screen.wait_for("edit big.txt")
        pressed = time.monotonic()
        child.send("\x1b")
        screen.wait_for("■ aborted")
        assert time.monotonic() - pressed < STOP_BOUND
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert (tmp_path / "big.txt").read_text() == text  # stopped: the file is as it was


ONE_TO_TWO = {"old_text": "one", "new_text": "two"}


def edit_call(call_id: str, arguments: dict[str, Any] | str) -> ToolCallSpec:
    return ToolCallSpec("edit", arguments, call_id)


def editor_diffs(client: Any) -> list[tuple[str, str | None, str]]:
    return [
        (block.path, block.old_text, block.new_text)
        for update in client.of(ToolCallProgress)
        for block in update.content or []
        if block.type == "diff"
    ]


async def test_an_editor_gets_valid_messages_and_the_file_that_changes_whatever_the_arguments(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    """Wrong types, both spellings with different values, duplicate keys, a lone surrogate,
    NUL, escapes and bidi controls: every message is valid ACP (checked at the end), the
    question names the file that changes, and what is refused changes nothing."""
    a, b = workspace / "a.txt", workspace / "b.txt"
    a.write_text("one\n")
    b.write_text("one\n")
    hostile = "\ud800 \x00 \x1b]0;pwned\x07 \u202etxt.exe"
    refused = (
        edit_call("types", {"path": 42, "old_text": ["one"], "new_text": {"x": 1}}),
        edit_call("edits", {"path": "a.txt", "edits": "one"}),
        edit_call("both", {"path": "a.txt", "file_path": "b.txt", **ONE_TO_TWO}),
        edit_call("texts", {"file_path": "a.txt", "old_string": "on", **ONE_TO_TWO}),
    )
    duplicate = '{"path": "a.txt", "path": "b.txt", "old_text": "one", "new_text": "dup"}'
    odd = {"path": "a.txt", "old_text": "one", "new_text": hostile}
    llm_server.script(
        Turn(tool_calls=refused),
        Turn(tool_calls=(edit_call("dup", duplicate),)),
        Turn(tool_calls=(edit_call("odd", odd),)),
        Turn(text="done"),
    )
    client = SavingEditor()
    conn = await agent(client, "--permission-mode", "ask", "--sandbox", "off",
                       capabilities=EDITOR_FS)  # fmt: skip
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    reply = await prompt(conn, session.session_id, "go")
    assert reply.stop_reason == "end_turn"
    failed = {u.tool_call_id for u in client.of(ToolCallProgress) if u.status == "failed"}
    assert {"types", "edits", "both", "texts"} <= failed
    assert b.read_text() == "dup\n"  # the last of the duplicate keys, as the question said
    asked = [(call.title, [p.path for p in call.locations or []]) for call, _ in client.asked]
    assert asked == [("edit: b.txt", [str(b)]), ("edit: a.txt", [str(a)])]
    shown = "\ufffd \x00 \x1b]0;pwned\x07 \u202etxt.exe"
    assert a.read_bytes() == (shown + "\n").encode()
    assert editor_diffs(client) == [(str(b), "one\n", "dup\n"), (str(a), "one\n", shown + "\n")]


ODD_NAMES = ["a\nb.txt", "cr\r\n.txt", "-n.txt", "--help", "\u202etxt.exe"]
"""Names a model may write: line breaks (git reads names a line each), a leading `-`, bidi."""


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
def test_writes_and_edits_of_odd_names_are_undone_byte_exact(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, in_git: bool
) -> None:
    (workspace / "-rf").write_text("keep me\n")
    if in_git:
        git(workspace, "init", "-q")
        git(workspace, "add", "-A")
        git(workspace, "commit", "-qm", "start")
    writes = [ToolCallSpec("write", {"path": n, "content": "new\n"}, f"w{i}") for i, n in
              enumerate(ODD_NAMES)]  # fmt: skip
    edit = ToolCallSpec("edit", {"path": "-rf", "old_text": "keep", "new_text": "lost"}, "e")
    llm_server.script(*(Turn(tool_calls=(call,)) for call in [*writes, edit]), Turn(text="ok"))
    done = run_di_code("run", "--permission-mode", "auto", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    assert "checkpoint" not in done.stderr
    assert all((workspace / name).read_text() == "new\n" for name in ODD_NAMES)
    assert (workspace / "-rf").read_text() == "lost me\n"

    undone = run_di_code("undo", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert sorted(p.name for p in workspace.iterdir() if p.name != ".git") == ["-rf"]
    assert (workspace / "-rf").read_text() == "keep me\n"


async def test_an_editor_sees_and_undoes_odd_names_and_is_never_asked_for_a_link_out(
    agent: Any, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    """A name with a line break or a leading `-` gets its diff and its undo through the
    editor; a file that is a symlink out of the workspace, to /dev/zero or to a FIFO is refused
    without reading it or asking the editor for it, and what it points to stays as it was."""
    secret = tmp_path / "secret.txt"
    secret.write_text("secret one\n")
    (workspace / "out.txt").symlink_to(secret)
    (workspace / "zero").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "pipe")
    (workspace / "pipe").symlink_to(tmp_path / "pipe")
    odd = workspace / "a\nb -x.txt"
    odd.write_text("one\n")
    dash = workspace / "-rf"
    dash.write_text("one\n")
    links = ("out.txt", "zero", "pipe")
    calls = [
        edit_call("odd", {"path": odd.name, **ONE_TO_TWO}),
        edit_call("dash", {"path": "-rf", **ONE_TO_TWO}),
        *(edit_call(f"to-{n}", {"path": n, **ONE_TO_TWO}) for n in links),
        *(ToolCallSpec("write", {"path": n, "content": "x"}, f"w-{n}") for n in links),
    ]
    llm_server.script(*(Turn(tool_calls=(call,)) for call in calls), Turn(text="done"))
    client, conn, session_id = await saving_session(agent, workspace)
    reply = await asyncio.wait_for(prompt(conn, session_id, "go"), LIVENESS)
    assert reply.stop_reason == "end_turn"
    assert odd.read_text() == "two\n" and dash.read_text() == "two\n"
    assert editor_diffs(client) == [(str(odd), "one\n", "two\n"), (str(dash), "one\n", "two\n")]
    assert secret.read_text() == "secret one\n"
    assert all("secret" not in str(update) for _, update in client.updates)
    failed = {u.tool_call_id for u in client.of(ToolCallProgress) if u.status == "failed"}
    assert {"to-out.txt", "to-zero", "to-pipe", "w-out.txt", "w-zero", "w-pipe"} <= failed
    assert {path for path, _ in client.writes} == {str(odd), str(dash)}

    client.writes.clear()
    await prompt(conn, session_id, "/undo")
    assert "Undid prompt 1." in client.said()
    assert sorted(client.writes) == [(str(dash), "one\n"), (str(odd), "one\n")]
    assert odd.read_text() == "one\n" and dash.read_text() == "one\n"


@pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")
def test_the_chat_question_shows_escapes_and_bidi_in_a_path_and_its_diff_visibly(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """Nothing a model puts in a path, an old_text or a new_text reaches the terminal as a
    control: a title change, a screen clear or a right-to-left override is shown, not done."""
    name = "n\x1b]0;pwned-name\x07.txt"
    (tmp_path / name).write_text("one\n")
    new = "\x1b[2J\x1b]0;pwned-text\x07 \u202eexe.txt \x9b31m red"
    edit = {"path": name, "old_text": "one", "new_text": new}
    llm_server.script(Turn(tool_calls=(edit_call("odd", edit),)), Turn(text="all done"))
    child = spawn_chat(llm_server, tmp_path)
    screen = Screen(child)
    try:
        screen.wait_for("›")
        child.sendline("go on")
        screen.wait_for("[y]es", after="red")  # the question, drawn after the diff
        screen.pump(GUARD_WAIT)
        shown = screen.text
        child.send("n")
        screen.wait_for("all done")
    finally:
        child.close(force=True)
    assert "? edit n␛]0;pwned-name␇.txt" in shown
    assert "+␛[2J␛]0;pwned-text␇ <U+202E>exe.txt \\x9b31m red" in shown
    assert "pwned" not in screen.written.replace("␛]0;pwned", "")
    assert "\u202e" not in screen.written and "\x9b" not in screen.written
    assert (tmp_path / name).read_text() == "one\n"


async def test_a_diff_of_a_million_changed_lines_fits_the_screen_within_a_bound() -> None:
    """The question's view of a write that changes every other line of a 4 MB file: cutting
    its ends out of a body of a million styled lines took minutes (on the event loop)."""
    diff = "".join(f"-{i % 10}\n+z\n" for i in range(500_000))
    body = await asyncio.wait_for(asyncio.to_thread(diff_text, diff, None), LIVENESS)
    shown, hidden = await asyncio.wait_for(asyncio.to_thread(fit, body, 20, 100), LIVENESS)
    assert hidden == 1_000_000 - 19
    assert shown.plain.split("\n")[9] == f"… {hidden} more lines here: press v to see all 1000000"
    assert shown.plain.split("\n")[:2] == ["-0", "+z"]


@pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")
def test_esc_while_the_question_of_a_huge_diff_is_prepared_ends_the_turn_and_chat_quits(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    before = "".join(f"{i % 10}\n" for i in range(1_900_000))  # under the 4 MB of a preview
    after = "".join(f"{i % 10}\n" if i % 2 else "z\n" for i in range(1_900_000))
    (tmp_path / "f.txt").write_text(before)
    write = ToolCallSpec("write", {"path": "f.txt", "content": after}, "w")
    llm_server.script(Turn(tool_calls=(write,), chunk_size=1 << 20), Turn(text="all done"))
    child, screen = open_chat(llm_server, tmp_path)
    try:
        child.sendline("go")
        screen.wait_for("? write f.txt")
        pressed = time.monotonic()
        child.send("\x1b")
        screen.wait_for("■ aborted")
        child.sendline("/exit")
        child.expect(pexpect.EOF, timeout=LIVENESS)
        assert time.monotonic() - pressed < STOP_BOUND
    finally:
        child.close(force=True)
    assert (tmp_path / "f.txt").read_text() == before


@pytest.mark.parametrize(
    "stdout_read",
    [True, False],
    ids=["stdout-read", "stdout-not-read"],
)
def test_sigterm_during_an_edit_of_many_replacements_ends_run_and_leaves_the_file_whole(
    llm_server: LLMServer, workspace: Path, di_code_home: Path, stdout_read: bool
) -> None:
    lines = lines_of(8000)
    text = "\n".join(lines) + "\n"
    (workspace / "big.txt").write_text(text)
    llm_server.script(
        Turn(tool_calls=(many_edits("big.txt", lines[:1300]),), chunk_size=1 << 20),
        Turn(text="ok"),
    )
    argv = [DI_CODE, "run", "--yes", "--sandbox", "off", "--output-format", "stream-json", "go"]
    process = subprocess.Popen(argv, cwd=workspace, env=cli_env(di_code_home, llm_server),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if '"type": "tool_execution_start"' in line:
                break
        if stdout_read:
            threading.Thread(target=process.stdout.read, daemon=True).start()
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=LIVENESS)
        assert time.monotonic() - sent < STOP_BOUND
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 143
    edited = "".join(line.upper() + "\n" for line in lines[:1300])
    assert (workspace / "big.txt").read_text() in (text, edited + text[len(edited) :])


def test_an_edit_of_a_file_that_grows_while_it_is_read_ends(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """A log another program keeps appending to (up to 200 MB here): the edit reads at most
    64 MB and ends, whatever it finds."""
    grow = workspace / "grow.log"
    grow.write_text("START\n")
    writer = subprocess.Popen(
        [sys.executable, "-c", "import sys\nwith open(sys.argv[1], 'a') as f:\n"
         " for _ in range(200):\n  f.write('x' * (1 << 20) + '\\n'); f.flush()", str(grow)],
    )  # fmt: skip
    try:
        edit = {"path": "grow.log", "old_text": "START", "new_text": "BEGIN"}
        llm_server.script(Turn(tool_calls=(edit_call("grow", edit),)), Turn(text="ok"))
        started = time.monotonic()
        done = run_di_code("run", "--yes", "--sandbox", "off", "go")
        assert done.returncode == 0, done.stderr
        assert time.monotonic() - started < LIVENESS * 2
    finally:
        writer.kill()
        writer.wait()
    result = request_text(llm_server.requests[1].body)
    assert "Successfully applied 1 edit to grow.log" in result or "too many to read whole" in result


def test_a_100_mb_line_and_a_1_mb_old_text_end_within_a_bound(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """One line of 100 MB is refused without being read whole; a 1 MB old_text missing from a
    4 MB file of the same short line repeated gets its hint in bounded work."""
    with (workspace / "line.txt").open("w") as f:
        for _ in range(100):
            f.write("y" * (1 << 20))
    (workspace / "same.txt").write_text("ab\n" * 1_300_000)
    llm_server.script(
        Turn(tool_calls=(edit_call("line", {"path": "line.txt", **ONE_TO_TWO}),)),
        Turn(tool_calls=(edit_call("same", {"path": "same.txt", "old_text": "ab\nac\n" * 170_000,
                                            "new_text": "x"}),), chunk_size=1 << 20),
        Turn(tool_calls=(ToolCallSpec("grep", {"pattern": "(a|aa)+$", "path": "same.txt"}, "g"),)),
        Turn(text="ok"),
    )  # fmt: skip
    started = time.monotonic()
    done = run_di_code("run", "--yes", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < LIVENESS * 2
    assert "line.txt holds 104857600 bytes: too many to read whole" in request_text(
        llm_server.requests[1].body
    )
    assert "old_text not found in same.txt" in request_text(llm_server.requests[2].body)
