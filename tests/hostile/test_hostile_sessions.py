"""Sessions attacked from README's "Reliability" (one writer per session, nothing lost), the
session options of `run` and `chat`, ACP's list/resume/close/delete and undo, with the classes
of HOSTILE.md: two processes on one session at each moment, the lock file replaced by a
symlink, a FIFO or a folder, SIGKILL in the middle of a session write, a closed stdout, a full
disk, and session files and ids written by someone else.

Every case runs the real `di-code` against the loopback model; after each, the session loads,
undo restores the right bytes, and what failed is said in one line."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import DI_CODE, cli_env
from tests.cli.conftest import workspace as workspace  # the fixture, for this folder too
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.processes import wait_until

TRACEBACK = "Traceback"
BUSY = "is in use by another di-code process"
CHECKPOINT_LOST = "checkpoint not recorded, undo may miss this prompt's changes"


def start(
    home: Path,
    server: LLMServer,
    workspace: Path,
    *args: str,
    stdin: int | None = subprocess.DEVNULL,
    limit: int | None = None,
) -> subprocess.Popen[str]:
    def limited() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.Popen(
        [DI_CODE, *args],
        cwd=workspace,
        env=cli_env(home, server),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limited,
    )


def finished(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=90)
    return process.returncode, out, err


def di_code(
    home: Path, server: LLMServer, workspace: Path, *args: str, limit: int | None = None
) -> tuple[int, str, str]:
    return finished(start(home, server, workspace, *args, limit=limit))


def one_session(home: Path) -> Path:
    (session,) = home.glob("sessions/*/*.jsonl")
    return session


def session_id(session: Path) -> str:
    return session.stem.partition("_")[2]


def edit(path: str, old: str, new: str, call_id: str) -> Turn:
    arguments = {"path": path, "old_text": old, "new_text": new}
    return Turn(tool_calls=(ToolCallSpec("edit", arguments, call_id),))


def said_once(err: str) -> str:
    """The one line a refusal or failure says (no traceback, nothing else)."""
    assert TRACEBACK not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def first_session(home: Path, server: LLMServer, workspace: Path) -> Path:
    server.script(Turn(text="first answer"))
    code, _, err = di_code(home, server, workspace, "run", "first prompt")
    assert code == 0, err
    return one_session(home)


def continued(home: Path, server: LLMServer, workspace: Path, text: str) -> tuple[str, str]:
    """`run -c` goes on with the session: (stdout, stderr); the model saw the first prompt."""
    server.script(Turn(text=f"answer to {text}"))
    seen = len(server.requests)
    code, out, err = di_code(home, server, workspace, "run", "-c", text)
    assert code == 0, err
    assert TRACEBACK not in err
    assert "first prompt" in json.dumps(server.requests[seen].body)
    return out, err


def undo_list(home: Path, server: LLMServer, workspace: Path) -> str:
    """`undo --list`'s output: the session still loads (exit 0, no traceback)."""
    code, out, err = di_code(home, server, workspace, "undo", "--list")
    assert code == 0 and TRACEBACK not in err, err
    return out


# ---------------------------------------------------------------- the lock file


def session_and_lock(home: Path, server: LLMServer, workspace: Path) -> tuple[Path, Path]:
    """A first session, and where its lock file goes, nothing there (for the case to put)."""
    session = first_session(home, server, workspace)
    lock = session.with_suffix(".lock")
    lock.unlink(missing_ok=True)
    return session, lock


def test_a_lock_file_replaced_by_a_symlink_is_never_written_through(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    session, lock = session_and_lock(di_code_home, llm_server, workspace)
    outside = tmp_path / "precious.txt"
    outside.write_bytes(b"the user's bytes\n")
    lock.symlink_to(outside)
    before = session.read_bytes()

    llm_server.script(Turn(text="should not be asked"))
    code, _, err = di_code(di_code_home, llm_server, workspace, "run", "-c", "more")
    assert outside.read_bytes() == b"the user's bytes\n"  # no pid written through the link
    assert code == 2, err
    assert session_id(session)[:12] in said_once(err)
    assert session.read_bytes() == before
    lock.unlink()
    continued(di_code_home, llm_server, workspace, "after the link went")


def test_a_lock_file_replaced_by_a_fifo_still_holds_the_session(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    _, lock = session_and_lock(di_code_home, llm_server, workspace)
    os.mkfifo(lock)

    llm_server.script(Turn(text="writing", fault="stall", fault_after=1))
    writer = start(di_code_home, llm_server, workspace, "run", "-c", "held")
    try:
        wait_until(lambda: len(llm_server.requests) == 2, "the writer's request")
        code, _, err = di_code(di_code_home, llm_server, workspace, "run", "-c", "second")
        assert code == 2, err
        assert BUSY in said_once(err)
        assert len(llm_server.requests) == 2
    finally:
        writer.kill()
        writer.wait(timeout=30)
    continued(di_code_home, llm_server, workspace, "after the writer died")


def test_a_folder_where_the_lock_file_goes_is_one_line_and_the_session_stays_readable(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    session, lock = session_and_lock(di_code_home, llm_server, workspace)
    lock.mkdir()
    before = session.read_bytes()
    for args in (("run", "-c", "more"), ("undo", "--yes")):
        code, _, err = di_code(di_code_home, llm_server, workspace, *args)
        assert code in (1, 2), (args, err)
        assert session_id(session)[:12] in said_once(err), args
    assert session.read_bytes() == before
    assert "first prompt" in undo_list(di_code_home, llm_server, workspace)


# ---------------------------------------------------------------- two processes at once


def test_two_continues_started_at_the_same_moment_one_goes_on_one_is_refused(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    session = first_session(di_code_home, llm_server, workspace)
    llm_server.script(Turn(text="working", fault="stall", fault_after=1))  # one: a second
    # writer that went on would be answered 400 and exit 1
    both = [start(di_code_home, llm_server, workspace, "run", "-c", "race") for _ in range(2)]
    try:
        wait_until(lambda: any(p.poll() is not None for p in both), "one of them to end")
        (loser,) = [p for p in both if p.poll() is not None]
        code, _, err = finished(loser)
        assert code == 2, err
        assert BUSY in said_once(err)
        wait_until(lambda: len(llm_server.requests) == 2, "the winner's request")
        (winner,) = [p for p in both if p is not loser]
        assert winner.poll() is None  # still holding it, mid-turn
    finally:
        for process in both:
            process.kill()
            process.wait(timeout=30)
    continued(di_code_home, llm_server, workspace, "after the race")
    assert list(di_code_home.glob("sessions/*/*.jsonl")) == [session]


def test_two_undos_at_the_same_moment_take_back_each_prompt_once(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_bytes(b"v0\n")
    llm_server.script(edit("notes.txt", "v0", "v1", "c1"), Turn(text="one"))
    assert di_code(di_code_home, llm_server, workspace, "run", "--yes", "p1")[0] == 0
    llm_server.script(edit("notes.txt", "v1", "v2", "c2"), Turn(text="two"))
    assert di_code(di_code_home, llm_server, workspace, "run", "-c", "--yes", "p2")[0] == 0
    assert notes.read_bytes() == b"v2\n"

    both = [start(di_code_home, llm_server, workspace, "undo", "--yes") for _ in range(2)]
    results = [finished(process) for process in both]
    undone = sorted(
        line for _, out, _ in results for line in out.splitlines() if line.startswith("undone:")
    )
    for code, _, err in results:
        assert TRACEBACK not in err
        if code != 0:
            assert code == 2 and BUSY in said_once(err), err
    expected = {
        ("undone: prompt 2 (p2)",): b"v1\n",
        ("undone: prompt 1 (p1)", "undone: prompt 2 (p2)"): b"v0\n",
    }
    assert tuple(undone) in expected, results
    assert notes.read_bytes() == expected[tuple(undone)]
    undo_list(di_code_home, llm_server, workspace)


# ---------------------------------------------------------------- failure in the middle


def test_sigkill_after_a_tools_edit_leaves_a_session_whose_undo_restores_the_file(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_bytes(b"before the prompt\n")
    first_session(di_code_home, llm_server, workspace)
    llm_server.script(
        edit("notes.txt", "before", "after", "c1"),
        Turn(text="thinking", fault="stall", fault_after=1),
    )
    writer = start(di_code_home, llm_server, workspace, "run", "-c", "--yes", "change it")
    wait_until(lambda: len(llm_server.requests) == 3, "the request after the edit")
    assert notes.read_bytes() == b"after the prompt\n"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)

    code, out, err = di_code(di_code_home, llm_server, workspace, "undo", "--yes")
    assert code == 0, err
    assert TRACEBACK not in err
    assert notes.read_bytes() == b"before the prompt\n"
    assert "undone: prompt 2 (change it)" in out.splitlines()
    continued(di_code_home, llm_server, workspace, "after the kill")


def test_sigkill_while_a_long_prompt_is_being_saved_leaves_a_session_that_goes_on(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    session = first_session(di_code_home, llm_server, workspace)
    size = session.stat().st_size
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes(b"long prompt " + b"y" * (40 << 20))
    with prompt.open("rb") as stdin:
        writer = start(di_code_home, llm_server, workspace, "run", "-c", "-", stdin=stdin.fileno())
        wait_until(lambda: session.stat().st_size > size, "the long prompt's line to start")
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)

    cut = not session.read_bytes().endswith(b"\n")
    if not cut:  # on a loaded machine the write can end before the kill lands: the whole
        llm_server.script(Turn(text="a summary"))  # prompt was saved, and is compacted first
    _, err = continued(di_code_home, llm_server, workspace, "after the kill")
    assert len(err.splitlines()) <= 1, err  # at most the cut-off line, said once
    if cut:  # and said again at every load, the prompt after it kept
        _, again = continued(di_code_home, llm_server, workspace, "once more")
        assert len(again.splitlines()) <= 1 and "skipped" in again, again
    assert "after the kill" in json.dumps(llm_server.requests[-1].body)  # not swallowed


def test_a_closed_stdout_during_a_run_loses_nothing_of_the_session(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    first_session(di_code_home, llm_server, workspace)
    llm_server.script(Turn(text="an answer nobody reads " * 2000, chunk_size=4096))
    runner = start(di_code_home, llm_server, workspace, "run", "-c", "second prompt")
    assert runner.stdout is not None
    runner.stdout.close()  # `| head` that has gone
    err = runner.stderr.read() if runner.stderr is not None else ""
    # the reader's leaving is seen at once and stops the run as SIGPIPE would (README: exit codes)
    assert runner.wait(timeout=60) == 141
    assert TRACEBACK not in err
    assert len(err.splitlines()) <= 1, err
    kept = one_session(di_code_home).read_text()
    assert "first prompt" in kept and "second prompt" in kept  # the stopped turn is recorded
    _, err = continued(di_code_home, llm_server, workspace, "third prompt")
    assert err == ""


def test_a_full_disk_mid_prompt_leaves_undo_keeping_the_change_it_cannot_prove(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_bytes(b"v0\n")
    llm_server.script(edit("notes.txt", "v0", "v1", "c1"), Turn(text="one"))
    assert di_code(di_code_home, llm_server, workspace, "run", "--yes", "p1")[0] == 0
    session = one_session(di_code_home)
    before = session.read_bytes()

    llm_server.script(edit("notes.txt", "v1", "v2", "c2"), Turn(text="two"))
    limit = len(before)  # the session cannot grow by a byte; the small workspace file can
    code, _, err = di_code(
        di_code_home, llm_server, workspace, "run", "-c", "--yes", "p2", limit=limit
    )
    assert code == 1, err
    assert TRACEBACK not in err
    said = err.splitlines()  # the session write, and the checkpoint it took along: once each
    assert said[0].startswith("di-code: cannot write session "), err
    assert said[1:] == [f"di-code: {CHECKPOINT_LOST}: {said[0][9:]}"], err
    assert session.read_bytes() == before  # whole lines only: nothing was added
    assert notes.read_bytes() == b"v2\n"

    code, out, err = di_code(di_code_home, llm_server, workspace, "undo", "--yes")
    assert TRACEBACK not in err
    assert notes.read_bytes() == b"v2\n", (out, err)  # p2's change is not provably p1's
    assert "notes.txt" in out + err


# ---------------------------------------------------------------- what a session file holds


def hostile_lines() -> list[bytes]:
    """Lines no di-code wrote, each to be skipped with one warning naming it."""
    message = '"message":{"role":"user","content":5,"timestamp":1}'
    return [
        b'{"type":"message","id":"big","text":"' + b"x" * (100 << 20),  # 100 MB, never closed
        b'{"type":"message","id":"d1","id":"d2","parent_id":null,"timestamp":1,"type":"what"}',
        ('{"type":"message","id":"w","parent_id":null,"timestamp":1,' + message + "}").encode(),
        b'{"type":"model_change","id":"n","parent_id":null,"timestamp":NaN,'
        b'"provider":"openai","model_id":"x"}',
        b'{"type":"compaction","id":"e","parent_id":null,"timestamp":1,"summary":"s",'
        b'"first_kept_entry_id":null,"tokens_before":1e400}',
        b'{"type":"message","id":"deep","x":' + b"[" * 800 + b"]" * 800 + b"}",
        b'{"type":"model_change","id":"t","parent_id":null,"timestamp":1e30,'
        b'"provider":"openai","model_id":"x"}',
        b'["not", "an", "entry"]',
        b"\xff\xfe not even UTF-8",
    ]


def test_a_session_file_full_of_lines_no_di_code_wrote_still_goes_on(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    session = first_session(di_code_home, llm_server, workspace)
    good = session.read_bytes().count(b"\n")
    bad = hostile_lines()
    with session.open("ab") as file:
        file.write(b"\n".join(bad) + b'\n{"type":"message","id":"torn"')  # no newline at the end
    numbers = range(good + 1, good + len(bad) + 2)

    _, err = continued(di_code_home, llm_server, workspace, "second prompt")
    warnings = err.splitlines()
    assert len(warnings) == len(numbers), err  # one warning a line, the torn one included
    named = set()
    for warning in warnings:
        assert warning.startswith(f"di-code: {session.name}: "), warning
        named |= {n for n in numbers if f"line {n} " in warning}
        named |= {numbers[-1]} if "the last line was cut off" in warning else set()
    assert named == set(numbers), err

    _, err = continued(di_code_home, llm_server, workspace, "third prompt")
    assert len(err.splitlines()) == len(numbers), err  # the next append did not join the tail
    assert "second prompt" in json.dumps(llm_server.requests[-1].body)
    assert "third prompt" in undo_list(di_code_home, llm_server, workspace)


def test_a_last_entry_whose_parent_is_nowhere_does_not_hide_the_conversation(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    session = first_session(di_code_home, llm_server, workspace)
    with session.open("ab") as file:  # well-formed, but its parent_id names no entry
        file.write(
            b'{"type":"model_change","id":"orphan","parent_id":"../../elsewhere",'
            b'"timestamp":1,"provider":"openai","model_id":"test-model"}\n'
        )
    _, err = continued(di_code_home, llm_server, workspace, "second prompt")
    assert len(err.splitlines()) <= 1 and TRACEBACK not in err, err


def test_one_corrupt_line_in_the_middle_loses_only_that_line(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    session = first_session(di_code_home, llm_server, workspace)
    continued(di_code_home, llm_server, workspace, "second prompt")
    lines = session.read_bytes().splitlines(keepends=True)
    (answer,) = [n for n, line in enumerate(lines) if b'"first answer"' in line]
    lines[answer] = b"\x00" * (len(lines[answer]) - 1) + b"\n"  # a sector lost to a crash
    session.write_bytes(b"".join(lines))

    _, err = continued(di_code_home, llm_server, workspace, "third prompt")  # sees the first
    assert "second prompt" in json.dumps(llm_server.requests[-1].body)
    assert len(err.splitlines()) == 1 and f"line {answer + 1} " in err, err


# ---------------------------------------------------------------- ids that are not ids


def test_session_ids_that_look_like_paths_or_another_folders_are_refused_in_one_line(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    theirs = first_session(di_code_home, llm_server, other)
    their_bytes = theirs.read_bytes()
    llm_server.script(Turn(text="mine"))
    assert di_code(di_code_home, llm_server, workspace, "run", "mine")[0] == 0
    files = sorted(p for p in di_code_home.rglob("*") if p.is_file())
    ids = ("../x", "..", "/", f"../{theirs.parent.name}", "*", " ", session_id(theirs)[:10])
    for command in (("run", "hi", "--session"), ("undo", "--yes", "--session")):
        for wanted in (*ids, session_id(theirs)):
            code, _, err = di_code(di_code_home, llm_server, workspace, *command, wanted)
            assert code == 2, (command, wanted, err)
            line = said_once(err)
            if wanted.startswith(session_id(theirs)[:10]):
                assert "belongs to" in line and str(other.resolve()) in line, line
    assert theirs.read_bytes() == their_bytes
    assert sorted(p for p in di_code_home.rglob("*") if p.is_file()) == files
    assert len(llm_server.requests) == 2  # none of them asked the model


# ---------------------------------------------------------------- a home that cannot be written


def read_only(home: Path, *command: str) -> list[str]:
    """`command` with `home` bind-mounted read-only (EROFS, which root cannot write past)."""
    return ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(home), str(home), *command]


def test_a_read_only_home_is_one_line_and_the_session_still_loads_after(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    session = first_session(di_code_home, llm_server, workspace)
    before = session.read_bytes()
    env = cli_env(di_code_home, llm_server)
    for args, expected in ((("run", "-c", "more"), 2), (("run", "fresh"), 1)):
        llm_server.script(Turn(text="answered"))
        done = subprocess.run(
            read_only(di_code_home, DI_CODE, *args),
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert done.returncode == expected, (args, done.stderr)
        assert TRACEBACK not in done.stderr
        said = done.stderr.splitlines()  # the session, and a checkpoint taken along (once)
        assert said[0].startswith("di-code: cannot hold session"), said
        assert "Read-only file system" in said[0], said
        assert said[1:] in ([], [f"di-code: {CHECKPOINT_LOST}: {said[0][9:]}"]), said
    assert session.read_bytes() == before
    assert list(di_code_home.glob("sessions/*/*.jsonl")) == [session]
    continued(di_code_home, llm_server, workspace, "writable again")


# ---------------------------------------------------------------- an editor on the same session


acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import RequestError  # noqa: E402

from tests.acp.conftest import agent as agent  # noqa: E402  (the fixture)
from tests.support.acp_editor import Editor  # noqa: E402
from tests.support.acp_editor import editor as editor  # noqa: E402  (the fixture)


async def test_an_editor_cannot_delete_load_or_resume_a_session_a_run_is_writing(
    editor: Editor, llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_bytes(b"v0\n")
    llm_server.script(edit("notes.txt", "v0", "v1", "c1"), Turn(text="one"))
    assert di_code(di_code_home, llm_server, workspace, "run", "--yes", "p1")[0] == 0
    session = one_session(di_code_home)
    held = session_id(session)
    llm_server.script(Turn(text="writing", fault="stall", fault_after=1))
    writer = start(di_code_home, llm_server, workspace, "run", "-c", "p2")
    try:
        wait_until(lambda: len(llm_server.requests) == 3, "the writer's request")
        before = sorted(p.name for p in session.parent.iterdir())
        for method, params in (
            ("session/delete", {}),
            ("session/load", {"cwd": str(workspace), "mcpServers": []}),
            ("session/resume", {"cwd": str(workspace)}),
        ):
            with pytest.raises(RequestError) as refused:
                await editor.ask(method, sessionId=held, **params)
            assert refused.value.code == -32603, (method, refused.value.data)
            assert BUSY in str(refused.value.data), method
        assert sorted(p.name for p in session.parent.iterdir()) == before  # nothing deleted
        listed = await editor.ask("session/list", cwd=str(workspace))  # reading needs no hold
        assert [s["sessionId"] for s in listed["sessions"]] == [held]
    finally:
        writer.kill()
        writer.wait(timeout=30)
    code, _, err = di_code(di_code_home, llm_server, workspace, "undo", "--yes")
    assert code == 0, err
    assert notes.read_bytes() == b"v0\n"  # its undo data was all still there


async def test_an_editor_that_closes_a_session_lets_the_terminal_go_on_with_it(
    editor: Editor, llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    session = first_session(di_code_home, llm_server, workspace)
    opened = session_id(session)
    await editor.ask("session/resume", cwd=str(workspace), sessionId=opened)
    code, _, err = di_code(di_code_home, llm_server, workspace, "run", "-c", "meanwhile")
    assert code == 2 and BUSY in said_once(err)
    await editor.ask("session/close", sessionId=opened)
    continued(di_code_home, llm_server, workspace, "after the close")
    with pytest.raises(RequestError) as refused:  # the terminal's run has ended: free again,
        await editor.ask("session/delete", sessionId=opened[:-1])  # but by its whole id only
    assert refused.value.code == -32602 and session.exists()


async def test_an_editor_naming_ids_that_look_like_paths_or_another_folders_opens_nothing(
    editor: Editor, llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    theirs = first_session(di_code_home, llm_server, other)
    their_bytes = theirs.read_bytes()
    files = sorted(p for p in di_code_home.rglob("*") if p.is_file())
    their_id = session_id(theirs)
    for wanted in ("../x", f"../{theirs.parent.name}/{their_id}", their_id[:8], "", their_id):
        for method, params in (
            ("session/load", {"cwd": str(workspace), "mcpServers": []}),
            ("session/resume", {"cwd": str(workspace)}),
            ("session/delete", {}),
        ):
            with pytest.raises(RequestError) as refused:
                await editor.ask(method, sessionId=wanted, **params)
            assert refused.value.code in (-32602, -32603), (method, wanted)
            if wanted == their_id and method != "session/delete":
                assert "belongs to" in str(refused.value.data), refused.value.data
    assert theirs.read_bytes() == their_bytes
    assert sorted(p for p in di_code_home.rglob("*") if p.is_file()) == files


def test_a_fifo_where_a_session_file_goes_neither_blocks_nor_hides_the_others(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    session = first_session(di_code_home, llm_server, workspace)
    fifo = session.with_name("9999-12-31T00-00-00-000000Z_" + "f" * 32 + ".jsonl")
    os.mkfifo(fifo)  # the newest name, and nobody ever writes to it
    continued(di_code_home, llm_server, workspace, "the real one goes on")
    for args, expected in ((("undo", "--list"), 0), (("undo", "--yes"), 1)):
        code, _, err = di_code(di_code_home, llm_server, workspace, *args)
        assert code == expected, (args, err)
        assert TRACEBACK not in err and len(err.splitlines()) <= 1, (args, err)
    assert fifo.exists()


# ---------------------------------------------------------------- chat's /clear and /resume


def test_chat_lets_go_at_clear_and_resume_refuses_a_session_a_run_is_writing(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    from tests.support.chat import chatting, say

    session = first_session(di_code_home, llm_server, workspace)
    held = session_id(session)
    with chatting(llm_server, workspace, "--session", held) as chat:
        say(chat, "/clear", "New session")
        llm_server.script(Turn(text="writing", fault="stall", fault_after=1))
        writer = start(di_code_home, llm_server, workspace, "run", "--session", held, "p2")
        try:
            wait_until(lambda: len(llm_server.requests) == 2, "the run's request")
            say(chat, f"/resume {held[:8]}", "is in use by another di-code process")
            llm_server.script(Turn(text="still here"))
            say(chat, "hello", "still here")
        finally:
            writer.kill()
            writer.wait(timeout=30)
        say(chat, f"/resume {held[:8]}", "Resumed session")
    llm_server.script(Turn(text="back"))
    code, _, err = di_code(di_code_home, llm_server, workspace, "run", "--session", held, "p3")
    assert code == 0 and err == "", err
    seen = json.dumps(llm_server.requests[-1].body)
    assert "first prompt" in seen and "p2" in seen  # the killed run's prompt was kept


# ---------------------------------------------------------------- text from outside, stored


def nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def test_text_from_every_entry_of_a_run_is_stored_so_the_session_loads_without_a_warning(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    first_session(di_code_home, llm_server, workspace)
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("read", {"path": "a\ud800b.txt"}, "c1"),)),
        Turn(tool_calls=(ToolCallSpec("read", {"path": nested(800)}, "c2"),)),
        Turn(text="lone \udfff surrogate, \x1b]0;title\x07 and \u202e bidi"),
    )
    piped = tmp_path / "stdin"
    piped.write_bytes(b"piped \xff\xfe not UTF-8 \x00 and \xed\xa0\x80 an encoded surrogate\n")
    with piped.open("rb") as stdin:
        args = ("run", "-c", "--yes", "prompt \udcff")  # argv: the byte 0xff, not UTF-8
        code, _, err = finished(
            start(di_code_home, llm_server, workspace, *args, stdin=stdin.fileno())
        )
    assert code == 0 and TRACEBACK not in err, err
    assert len(llm_server.requests) == 4  # the first prompt, then three turns
    _, err = continued(di_code_home, llm_server, workspace, "after the odd text")
    assert err == ""  # every line it stored loads as it was written
    sent = json.dumps(llm_server.requests[-1].body, ensure_ascii=False)
    assert "prompt \ufffd" in sent and "piped \ufffd\ufffd not UTF-8" in sent
    assert "lone \ufffd surrogate" in sent and "bidi" in sent


def test_undo_into_a_closed_stdout_restores_all_or_nothing_and_says_so(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    files = {name: workspace / name for name in ("a.txt", "b.txt")}
    for name, path in files.items():
        path.write_bytes(f"{name} v0\n".encode())
    llm_server.script(
        edit("a.txt", "v0", "v1", "c1"), edit("b.txt", "v0", "v1", "c2"), Turn(text="done")
    )
    assert di_code(di_code_home, llm_server, workspace, "run", "--yes", "p1")[0] == 0
    undo = start(di_code_home, llm_server, workspace, "undo", "--yes")
    assert undo.stdout is not None and undo.stderr is not None
    undo.stdout.close()  # `di-code undo --yes | head -0`
    err = undo.stderr.read()
    undo.wait(timeout=60)
    assert TRACEBACK not in err and len(err.splitlines()) <= 1, err
    states = {path.read_bytes() for path in files.values()}
    assert states in ({b"a.txt v0\n", b"b.txt v0\n"}, {b"a.txt v1\n", b"b.txt v1\n"}), states
    code, out, err = di_code(di_code_home, llm_server, workspace, "undo", "--yes")
    if states == {b"a.txt v0\n", b"b.txt v0\n"}:  # undone, and recorded as undone
        assert code == 1 and "nothing to undo" in err, (out, err)
    else:
        assert code == 0, err
    assert {path.read_bytes() for path in files.values()} == {b"a.txt v0\n", b"b.txt v0\n"}


async def test_two_editors_loading_one_session_at_the_same_moment_one_gets_it(
    agent: Any, llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    from tests.support.acp_editor import RecordingClient, prompt

    session = first_session(di_code_home, llm_server, workspace)
    wanted = session_id(session)
    editors = [await agent(RecordingClient()) for _ in range(2)]
    loads = [
        conn.load_session(cwd=str(workspace), session_id=wanted, mcp_servers=[]) for conn in editors
    ]
    results = await asyncio.gather(*loads, return_exceptions=True)
    refused = [r for r in results if isinstance(r, RequestError)]
    assert len(refused) == 1, results
    assert refused[0].code == -32603 and BUSY in str(refused[0].data)
    (winner,) = [conn for conn, r in zip(editors, results, strict=True) if r is not refused[0]]
    llm_server.script(Turn(text="loaded once"))
    assert (await prompt(winner, wanted, "go on")).stop_reason == "end_turn"
    assert "first prompt" in json.dumps(llm_server.requests[-1].body)


async def test_a_copied_session_file_is_its_own_session_by_its_name(
    editor: Editor, llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    original = first_session(di_code_home, llm_server, workspace)
    copy_id = "c0" * 16
    copy = original.with_name(original.name.replace(session_id(original), copy_id))
    copy.write_bytes(original.read_bytes())  # a fork the user made by hand: the header's id
    await editor.ask("session/load", cwd=str(workspace), sessionId=copy_id, mcpServers=[])
    llm_server.script(Turn(text="in the copy"))
    reply = await editor.prompt(copy_id, "go on in the copy")
    assert reply["stopReason"] == "end_turn"
    code, _, err = di_code(di_code_home, llm_server, workspace, "run", "--session", copy_id, "x")
    assert code == 2 and copy_id[:12] in said_once(err), err  # the copy is the one held
    continued_original = session_id(original)
    llm_server.script(Turn(text="in the original"))
    code, _, err = di_code(
        di_code_home, llm_server, workspace, "run", "--session", continued_original, "y"
    )
    assert code == 0, err  # the original is another session, free
    assert "go on in the copy" not in original.read_text()
