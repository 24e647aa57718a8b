"""A prompt's git snapshots attacked from README's "Undo" (the snapshot paragraphs), the stop
sentences of "Reliability" and "Sessions", with HOSTILE.md's classes: a signal (SIGINT,
SIGTERM, kill -9) at every step of a snapshot, before and after a tool; two di-code processes
on one repository while one is stopped; a full disk under `.git/objects` and under
DI_CODE_HOME; odd names and stream-like bytes among the changed blobs git imports; a file that
changes while it is read; a repository whose config and environment name programs; and,
outside git, a stopped run whose file is edited later.

Everything runs the real `di-code` against the loopback model, in real git repositories (a git
first on PATH that hangs at the chosen step: tests/support/hanging_git); after each, the next
prompt is recorded and `di-code undo` gives back the bytes, nothing lost."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest

from tests.cli.conftest import cli_env
from tests.support.chat import spawn_chat
from tests.support.disks import fill, tiny_disk
from tests.support.git import aged, git
from tests.support.hanging_git import hanging_git
from tests.support.llm_server import WHOLE, LLMServer, ToolCallSpec, Turn, call
from tests.support.processes import processes_running, wait_until
from tests.support.snapshot_runs import (
    CHANGE,
    STALL,
    STOP_BOUND,
    TRACEBACK,
    contents,
    di_code,
    repository,
    stalled,
    start,
    stop,
    undone_exactly,
)
from tests.support.undo_cli import planted

STEPS = ("ls-files", "diff-files", "fast-import", "write-tree", "update-ref")
"""The git steps of a snapshot after an earlier one: list, compare, write blobs, tree, ref."""
HANG = "sleep 30"
"""What the hanging git runs (tests/support/hanging_git): a live one is a git left behind."""


def prepared(llm_server: LLMServer, env: dict[str, str], work: Path) -> None:
    """A repository with one recorded prompt (the private index made), then a change of the
    user's, so the next snapshot runs every step: list, compare, import, tree, ref."""
    repository(work)
    llm_server.script(Turn(text="hello"))
    assert di_code(env, work, "run", "--yes", "hi").returncode == 0
    (work / "a.txt").write_bytes(b"a changed by the user\n")
    (work / "untracked.txt").write_bytes(b"u\n")


# 1. Stops at every step ----------------------------------------------------------------------


SIGNALS = [(signal.SIGINT, 130, step) for step in STEPS] + [(signal.SIGHUP, 129, "fast-import")]


@pytest.mark.parametrize(
    ("number", "code", "step"), SIGNALS, ids=[f"{n.name}-{s}" for n, _, s in SIGNALS]
)
def test_a_signal_at_each_snapshot_step_ends_at_once_leaves_no_git_and_the_next_undo_exact(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path,
    number: signal.Signals, code: int, step: str,
) -> None:  # fmt: skip
    """Ctrl-C (130), or a closed terminal (SIGHUP, 129), while the prompt's first snapshot
    hangs at `step`: the run ends without waiting for it, no git of it is left running, and
    the next prompt is undone exactly."""
    env = cli_env(di_code_home, llm_server)
    prepared(llm_server, env, workspace)
    running = stalled(llm_server, env, workspace, tmp_path, step, "run", "-c", "--yes", "wait")
    err, took = stop(running, number)
    assert running.returncode == code, err
    assert TRACEBACK not in err
    assert took < STOP_BOUND, f"ended {took:.1f} s after {number.name}"
    wait_until(lambda: not processes_running(HANG, under=workspace), "no git left")
    undone_exactly(llm_server, env, workspace, "--continue")


@pytest.mark.parametrize("step", ["ls-files", "fast-import"])
def test_kill_9_while_a_snapshot_runs_leaves_no_git_and_the_next_undo_exact(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path, step: str
) -> None:
    """README: every git di-code starts ends with di-code, even when di-code is killed; what a
    killed record leaves costs a later prompt time only."""
    env = cli_env(di_code_home, llm_server)
    prepared(llm_server, env, workspace)
    running = stalled(llm_server, env, workspace, tmp_path, step, "run", "-c", "--yes", "wait")
    stop(running, signal.SIGKILL)
    wait_until(lambda: not processes_running(HANG, under=workspace), "the killed run's git ended")
    undone_exactly(llm_server, env, workspace, "--continue")


def test_a_stop_while_the_snapshot_after_a_tool_hangs_ends_within_its_bound(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """The prompt starts on an unchanged tree (no blob to import); its write tool makes one, so
    the snapshot after it imports and hangs there. SIGTERM: di-code ends within the stop's
    bound (143), no git left, and the next prompt is recorded and undone exactly."""
    env = cli_env(di_code_home, llm_server)
    repository(workspace)
    aged(workspace)  # no file is hashed (and imported) again before the tool
    llm_server.script(Turn(text="hello"))
    assert di_code(env, workspace, "run", "--yes", "hi").returncode == 0
    hanging, seen = hanging_git(tmp_path, "fast-import")
    write = {"path": "made.txt", "content": "made by the tool\n"}
    llm_server.script(call("write", write, "c1"))  # stopped before it asks again
    running = start(env | hanging, workspace, "run", "--continue", "--yes", "make")
    wait_until(seen.exists, "the import after the tool")
    err, took = stop(running, signal.SIGTERM)
    assert running.returncode == 143, err
    assert TRACEBACK not in err
    assert took < STOP_BOUND, f"ended {took:.1f} s after SIGTERM"
    wait_until(lambda: not processes_running(HANG, under=workspace), "no git left")
    assert (workspace / "made.txt").read_bytes() == b"made by the tool\n"
    undone_exactly(llm_server, env, workspace, "--continue")


def test_a_prompt_stopped_before_its_record_is_not_listed_and_undo_takes_the_one_before(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """README: a prompt whose first record was still being made records nothing (not in
    `undo --list`); `undo` then takes back the prompt before it, to the byte."""
    env = cli_env(di_code_home, llm_server)
    repository(workspace)
    before = contents(workspace)
    llm_server.script(*CHANGE)
    assert di_code(env, workspace, "run", "--yes", "first prompt").returncode == 0
    arguments = ("run", "--continue", "--yes", "stopped prompt")
    running = stalled(llm_server, env, workspace, tmp_path, "ls-files", *arguments)
    err, _ = stop(running, signal.SIGTERM)
    assert running.returncode == 143, err
    listed = di_code(env, workspace, "undo", "--list")
    assert listed.returncode == 0, listed.stderr
    assert "first prompt" in listed.stdout
    assert "stopped prompt" not in listed.stdout, listed.stdout
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == before


def test_esc_in_chat_at_the_tree_step_then_the_same_chats_undo_is_exact(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """Esc while the prompt's first snapshot hangs writing its tree (git's lock left on the
    staged private index of this very process): the turn ends at once, and the same chat's
    next prompt is recorded and its `/undo --yes` gives back the bytes."""
    env = cli_env(di_code_home, llm_server)
    prepared(llm_server, env, workspace)
    hanging, seen = hanging_git(tmp_path, "write-tree")
    llm_server.script(STALL)
    home = {"DI_CODE_HOME": str(di_code_home), "DI_CODE_DISCOVERY": ""}
    child = spawn_chat(llm_server, workspace, "--yes", "--sandbox", "off", env=home | hanging)
    try:
        child.expect("›")
        child.sendline("wait")
        wait_until(seen.exists, "the snapshot's tree")
        stopped = time.monotonic()
        child.send("\x1b")
        child.expect("aborted")
        took = time.monotonic() - stopped
        before = contents(workspace)
        llm_server.script(CHANGE[0], Turn(text="model finished"))
        child.sendline("change")
        child.expect("model finished")
        child.expect("›")
        changed = contents(workspace)
        child.sendline("/undo --yes")
        child.expect("Undid prompt")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert took < STOP_BOUND, f"the turn ended {took:.1f} s after Esc"
    assert changed != before
    assert contents(workspace) == before


def test_a_prompt_stopped_after_its_record_stays_listed_and_undo_skips_it(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """README: a prompt whose first record was already made when the stop came stays listed,
    with nothing to undo; `undo` takes back the newest prompt that changed files, and keeps
    what the user changed between the two."""
    env = cli_env(di_code_home, llm_server)
    repository(workspace)
    llm_server.script(*CHANGE)
    assert di_code(env, workspace, "run", "--yes", "first prompt").returncode == 0
    kept = git(workspace, "for-each-ref", "refs/di-code/").count("\n")
    (workspace / "b.txt").write_bytes(b"b, the user's\n")  # a new tree: a new ref
    llm_server.script(STALL)
    asked = len(llm_server.requests)
    running = start(env, workspace, "run", "--continue", "--yes", "recorded prompt")
    wait_until(lambda: len(llm_server.requests) > asked, "the request")
    refs = lambda: git(workspace, "for-each-ref", "refs/di-code/").count("\n")  # noqa: E731
    wait_until(lambda: refs() > kept, "the prompt's record")
    err, _ = stop(running, signal.SIGTERM)
    assert running.returncode == 143, err
    listed = di_code(env, workspace, "undo", "--list")
    assert "first prompt" in listed.stdout and "recorded prompt" in listed.stdout, listed.stdout
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == {b"a.txt": b"a\n", b"b.txt": b"b, the user's\n"}


def dead_pid() -> int:
    """The id of a process that has ended (and been waited for)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_copies_of_the_private_index_killed_runs_left_go_once_old_and_no_link_is_followed(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """Beside the private index, what killed runs were writing: a copy two hours old, a
    link (two hours old) to a file of the user's outside, and a copy of a minute ago. README:
    the copy a killed run was writing is removed by a later run once an hour old, and no link
    is followed. The next prompt is undone exactly; the outside file is untouched."""
    env = cli_env(di_code_home, llm_server)
    prepared(llm_server, env, workspace)
    [index] = di_code_home.rglob("snapshot-cache/*.index")
    pid = dead_pid()
    old, link, fresh = (index.with_name(f"{index.name}.{pid}.{n}.tmp") for n in (1, 2, 3))
    old.write_bytes(index.read_bytes())
    fresh.write_bytes(index.read_bytes())
    mine = tmp_path / "mine.txt"
    mine.write_bytes(b"the user's own\n")
    link.symlink_to(mine)
    two_hours_ago = time.time() - 7200
    for path in (old, link):
        os.utime(path, (two_hours_ago, two_hours_ago), follow_symlinks=False)
    undone_exactly(llm_server, env, workspace, "--continue")
    assert not old.exists()
    assert not link.is_symlink()
    assert fresh.exists()
    assert mine.read_bytes() == b"the user's own\n"


@pytest.mark.parametrize("step", ["write-tree", "update-ref"])
def test_a_stopped_snapshots_objects_pruned_by_the_users_gc_cost_the_next_prompt_nothing(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path, step: str
) -> None:
    """A run stopped after its import wrote the blobs of the user's change (no ref keeps them
    yet); the user's `git gc --prune=now` deletes them. The next prompt, whose private index
    may name them, is recorded and undone exactly."""
    env = cli_env(di_code_home, llm_server)
    prepared(llm_server, env, workspace)
    running = stalled(llm_server, env, workspace, tmp_path, step, "run", "-c", "--yes", "wait")
    err, _ = stop(running, signal.SIGTERM)
    assert running.returncode == 143, err
    git(workspace, "gc", "-q", "--prune=now")  # with what the stopped git left
    undone_exactly(llm_server, env, workspace, "--continue")


@pytest.mark.parametrize("step", ["rev-parse", "status"])
def test_a_work_tree_look_that_times_out_at_start_up_still_gets_bashs_changes_undone(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path, step: str
) -> None:
    """Start-up's look for the work tree (`rev-parse`, then `status`, each given at most 5 s)
    hangs: the folder is still inside git, so the prompt's checkpoints must not take it for
    one outside git, where what bash changes cannot be undone (README: every prompt can be
    taken back, including what bash changed)."""
    env = cli_env(di_code_home, llm_server)
    repository(workspace)
    before = contents(workspace)
    hanging, seen = hanging_git(tmp_path, step)
    command = "echo bash > a.txt && rm b.txt && echo new > c.txt"
    llm_server.script(call("bash", {"command": command}, "c1"), Turn(text="done"))
    ran = di_code(env | hanging, workspace, "run", "--yes", "--sandbox", "off", "change")
    assert ran.returncode == 0, ran.stderr
    assert seen.exists()  # the look hung
    assert contents(workspace) != before
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == before


# 2. Two processes on one repository ----------------------------------------------------------


def test_a_run_stopped_mid_tree_beside_another_run_costs_neither_a_byte(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """Run A hangs writing its tree (git's lock on its staged private index) while run B, of
    the same home and repository, makes and records changes; B is undone exactly while A
    hangs; A is stopped, and its session's next prompt is undone exactly too."""
    env = cli_env(di_code_home, llm_server)
    prepared(llm_server, env, workspace)
    first = stalled(llm_server, env, workspace, tmp_path, "write-tree", "run", "-c", "--yes", "w")
    try:
        undone_exactly(llm_server, env, workspace)  # B: a new session
    finally:
        err, _ = stop(first, signal.SIGTERM)
    assert first.returncode == 143, err
    assert TRACEBACK not in err
    sessions = sorted(di_code_home.glob("sessions/*/*.jsonl"), key=lambda p: p.stat().st_mtime)
    session_a = sessions[0].stem.rpartition("_")[2]
    undone_exactly(llm_server, env, workspace, "--session", session_a)


def test_undo_of_a_session_whose_snapshot_hangs_is_refused_until_the_run_is_stopped(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """README (Sessions): while a run holds the session, its `undo` is refused (exit 2, one
    line) and touches nothing, even while the run's snapshot hangs listing the files; once the
    run is stopped, undo takes back the prompt before it."""
    env = cli_env(di_code_home, llm_server)
    repository(workspace)
    before = contents(workspace)
    llm_server.script(*CHANGE)
    assert di_code(env, workspace, "run", "--yes", "first").returncode == 0
    changed = contents(workspace)
    running = stalled(llm_server, env, workspace, tmp_path, "ls-files", "run", "-c", "--yes", "w")
    try:
        refused = di_code(env, workspace, "undo", "--yes")
        assert contents(workspace) == changed
    finally:
        err, _ = stop(running, signal.SIGTERM)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.count("\n") == 1 and "in use by another di-code" in refused.stderr
    assert running.returncode == 143, err
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == before


# 3. Full disks -------------------------------------------------------------------------------

LARGE_WRITE = {"path": "big.txt", "content": os.urandom(400_000).hex()}
"""800 KB of text that packs to far more than the room left."""


@contextlib.contextmanager
def full_object_store(
    llm_server: LLMServer, env: dict[str, str], work: Path
) -> Iterator[tuple[Path, subprocess.CompletedProcess[str], dict[bytes, bytes]]]:
    """`.git/objects` on a disk of its own that fills up before a prompt whose first tool
    writes 800 KB (its import fails) and whose second tool writes again: that disk, the run,
    and the files before it."""
    with tiny_disk(work / ".git" / "objects", "2m") as objects:
        repository(work)
        llm_server.script(Turn(text="hello"))
        assert di_code(env, work, "run", "--yes", "hi").returncode == 0
        fill(objects, leave=64 * 1024)
        before = contents(work)
        llm_server.script(
            Turn(
                tool_calls=(
                    ToolCallSpec("write", {"path": "a.txt", "content": "model\n"}, "c1"),
                    ToolCallSpec("write", LARGE_WRITE, "c2"),
                ),
                chunk_size=WHOLE,  # the 800 KB in one delta: 4-character ones took a minute
            ),
            call("write", {"path": "b.txt", "content": "model\n"}, "c3"),
            Turn(text="done"),
        )
        yield objects, di_code(env, work, "run", "--continue", "--yes", "big"), before


def test_a_full_object_store_is_one_line_per_failed_checkpoint_and_the_next_is_tried(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """README (Undo): a snapshot git cannot write (a full `.git`) is one line per checkpoint,
    which says undo keeps that tool's changes, and the next tool's is tried again (room may
    have been made meanwhile); never the session's `checkpoint not recorded`, never more."""
    env = cli_env(di_code_home, llm_server)
    with full_object_store(llm_server, env, workspace) as (_, full, _):
        said = [line for line in full.stderr.splitlines() if "checkpoint" in line]
        assert said, full.stderr
        for line in said:
            assert re.fullmatch(
                r"checkpoint (before|after) this tool failed, undo will keep its changes: .+",
                line.removeprefix("di-code: "),
            ), full.stderr
        assert "Traceback" not in full.stderr
        assert "checkpoint not recorded" not in full.stderr


def test_a_full_object_store_during_a_prompt_loses_nothing_and_the_next_undo_is_exact(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """The imports after the tools fail for want of room: undo restores no half file and
    deletes none of the user's; once there is room again the next prompt is undone exactly."""
    env = cli_env(di_code_home, llm_server)
    with full_object_store(llm_server, env, workspace) as (objects, full, before):
        assert full.stderr.count("Out of diskspace") >= 1, full.stderr
        undo = di_code(env, workspace, "undo", "--yes")
        assert undo.returncode in (0, 1), undo.stdout + undo.stderr
        now = contents(workspace)
        for name, data in now.items():  # each file the user's or the model's, whole
            assert data in (before.get(name), b"model\n", LARGE_WRITE["content"].encode()), name
        assert set(before) <= set(now)
        (objects / "filler").unlink()
        undone_exactly(llm_server, env, workspace, "--continue")


def test_a_full_home_while_the_private_index_is_staged_leaves_no_copy_and_loses_nothing(
    llm_server: LLMServer, tmp_path: Path, workspace: Path
) -> None:
    """DI_CODE_HOME fills up while a snapshot stages its private index (3,000 files): at
    most one line, no traceback, no partial copy left to hold the space; once there is room
    the next prompt is undone exactly."""
    repository(workspace)
    for i in range(3000):
        (workspace / f"f{i:04}.txt").write_text(f"{i}\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "many")
    with tiny_disk(tmp_path / "home", "4m") as home:
        env = cli_env(home, llm_server)
        llm_server.script(Turn(text="hello"))
        assert di_code(env, workspace, "run", "--yes", "hi").returncode == 0
        (workspace / "a.txt").write_bytes(b"the user's\n")
        fill(home, leave=48 * 1024)
        write = {"path": "a.txt", "content": "while the home was full\n"}
        llm_server.script(call("write", write, "c1"), Turn(text="done"))
        full = di_code(env, workspace, "run", "--continue", "--yes", "change")
        said = [line for line in full.stderr.splitlines() if "checkpoint" in line]
        assert len(said) <= 1, full.stderr
        left = [p.name for p in home.rglob("*.tmp*")]
        assert not left, left
        (home / "filler").unlink()
        assert di_code(env, workspace, "undo", "--list").returncode == 0
        undone_exactly(llm_server, env, workspace, "--continue")


def test_a_full_object_store_never_fails_a_prompt_whose_files_keep_their_bytes(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """`.git/objects` full to the last byte; the prompt's tools touch every file and write one
    with the bytes it has. README: a prompt that changes nothing adds no object, so nothing
    needs room: the prompt is recorded without a word."""
    env = cli_env(di_code_home, llm_server)
    with tiny_disk(workspace / ".git" / "objects", "2m") as objects:
        repository(workspace)
        aged(workspace)
        llm_server.script(Turn(text="hello"))
        assert di_code(env, workspace, "run", "--yes", "hi").returncode == 0
        fill(objects)
        same = {"path": "b.txt", "content": "b\n"}
        llm_server.script(
            call("bash", {"command": "touch a.txt b.txt"}, "c1"),
            call("write", same, "c2"),
            Turn(text="done"),
        )
        ran = di_code(env, workspace, "run", "--continue", "--yes", "--sandbox", "off", "touch")
        assert ran.returncode == 0, ran.stderr
        assert "checkpoint" not in ran.stderr, ran.stderr


# 4. What git is fed --------------------------------------------------------------------------

ODD_NAMES = [
    b"new\nline.txt",
    b"ends-in-cr\r",
    b"-rf",
    b"--all",
    b"blob",
    b"data 5",
    b"\xff\xfe.bin",
]
STREAM_LIKE = b"feature done\nblob\nmark :1\ndata 3\nabc\ndone\n\0get-mark :1\n"
"""Bytes that read as fast-import commands: a file's bytes, never the stream's."""


def test_odd_names_and_stream_like_bytes_among_changed_blobs_come_back_byte_exact(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """The user changes files with names git would split or take as options, and one whose
    bytes read as a fast-import stream (so the next snapshot imports them as changed blobs);
    the prompt's bash changes them all again; undo gives each its own bytes back."""
    env = cli_env(di_code_home, llm_server)
    repository(workspace)
    base = os.fsencode(workspace)
    for name in ODD_NAMES:
        Path(os.fsdecode(os.path.join(base, name))).write_bytes(b"first " + name)
    llm_server.script(Turn(text="hello"))
    assert di_code(env, workspace, "run", "--yes", "hi").returncode == 0
    for number, name in enumerate(ODD_NAMES):
        Path(os.fsdecode(os.path.join(base, name))).write_bytes(STREAM_LIKE * number + name)
    (workspace / "a.txt").write_bytes(STREAM_LIKE)
    before = contents(workspace)
    command = "for f in *; do printf 'tool' > \"./$f\"; done"
    llm_server.script(call("bash", {"command": command}, "c1"), Turn(text="done"))
    ran = di_code(env, workspace, "run", "--continue", "--yes", "--sandbox", "off", "clobber")
    assert ran.returncode == 0, ran.stderr
    assert all(data == b"tool" for data in contents(workspace).values())
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == before


def test_the_models_writes_to_odd_names_are_undone_exactly(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """The model's write tool makes files named like options and with a newline, and
    rewrites one named `--all` (the paths a tool's snapshot is told about); undo deletes what
    it made and gives `--all` its bytes back."""
    env = cli_env(di_code_home, llm_server)
    repository(workspace)
    (workspace / "--all").write_bytes(b"the user's\n")
    aged(workspace)
    llm_server.script(Turn(text="hello"))
    assert di_code(env, workspace, "run", "--yes", "hi").returncode == 0
    before = contents(workspace)
    writes = [("-n", "made\n"), ("x\ny.txt", "made\n"), ("--all", "model\n"), ("sub/-", "m\n")]
    specs = tuple(
        ToolCallSpec("write", {"path": path, "content": content}, f"c{n}")
        for n, (path, content) in enumerate(writes)
    )
    llm_server.script(Turn(tool_calls=specs), Turn(text="done"))
    ran = di_code(env, workspace, "run", "--continue", "--yes", "odd")
    assert ran.returncode == 0, ran.stderr
    assert (workspace / "x\ny.txt").exists()
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == before


def test_a_file_rewritten_while_the_snapshots_read_it_is_never_restored_half(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """A 4 MB file rewritten in place, over and over, by a program of the user's while the
    prompt's snapshots read it: whatever undo does with it, the file is one whole version
    (README: a file that changes while it is read is not captured)."""
    env = cli_env(di_code_home, llm_server)
    repository(workspace)
    busy = workspace / "busy.bin"
    busy.write_bytes(b"\0" * 4_000_000)
    llm_server.script(Turn(text="hello"))
    assert di_code(env, workspace, "run", "--yes", "hi").returncode == 0
    writing = threading.Event()
    writing.set()

    def rewrite() -> None:
        version = 0
        with busy.open("r+b") as handle:
            while writing.is_set():
                version = version % 255 + 1
                for _ in range(40):
                    handle.write(bytes([version]) * 100_000)
                    handle.flush()
                handle.seek(0)

    writer = threading.Thread(target=rewrite, daemon=True)
    writer.start()
    try:
        command = "sleep 1; echo model > a.txt; sleep 1"
        llm_server.script(call("bash", {"command": command}, "c1"), Turn(text="done"))
        ran = di_code(env, workspace, "run", "--continue", "--yes", "--sandbox", "off", "go")
    finally:
        writing.clear()
        writer.join()
    assert ran.returncode == 0, ran.stderr
    undone = di_code(env, workspace, "undo", "--yes")
    assert TRACEBACK not in undone.stderr
    data = busy.read_bytes()
    assert len(data) == 4_000_000 and len(set(data)) == 1, sorted(set(data))
    assert (workspace / "a.txt").read_bytes() == b"a\n"


def test_a_repository_naming_programs_everywhere_runs_none_while_blobs_are_imported(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """Config (through an include), `.gitattributes` and `GIT_*` variables name programs at
    each step of a snapshot that imports changed blobs, writes a tree and a ref: none runs,
    and undo is exact."""
    program, marker = planted(tmp_path)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("reference-transaction", "post-index-change", "pre-auto-gc", "post-rewrite"):
        (hooks / hook).write_text(Path(program).read_text())
        (hooks / hook).chmod(0o755)
    exec_path = tmp_path / "exec-path"
    exec_path.mkdir()
    for name in ("git-fast-import", "git-write-tree", "git-update-ref"):
        (exec_path / name).write_text(Path(program).read_text())
        (exec_path / name).chmod(0o755)
    repository(workspace)
    included = tmp_path / "included.config"
    included.write_text(
        f"[core]\n\tfsmonitor = {program}\n\thooksPath = {hooks}\n"
        f"\talternateRefsCommand = {program}\n\tsshCommand = {program}\n"
        f'[filter "x"]\n\tclean = {program}\n\tsmudge = {program}\n\tprocess = {program}\n'
        f"[gc]\n\tauto = 1\n\tautoPackLimit = 1\n[fastimport]\n\tunpackLimit = 1\n"
    )
    with (workspace / ".git" / "config").open("a") as config:
        config.write(f"[include]\n\tpath = {included}\n")
    (workspace / ".gitattributes").write_text("* filter=x diff=x\n")
    environment = {
        "GIT_EXEC_PATH": str(exec_path),
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.hooksPath",
        "GIT_CONFIG_VALUE_0": str(hooks),
    }
    env = cli_env(di_code_home, llm_server, **environment)
    llm_server.script(Turn(text="hello"))
    assert di_code(env, workspace, "run", "--yes", "hi").returncode == 0
    (workspace / "a.txt").write_bytes(b"the user's\n")
    undone_exactly(llm_server, env, workspace, "--continue")
    assert not marker.exists()


def test_over_a_hundred_changed_blobs_with_twins_and_known_bytes_come_back_exact(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """Around the number of blobs that go to git without asking which it lacks (100): 130
    changed files, half of them twins of each other, some with bytes the repository holds
    already (a committed file's, an empty one); the tool changes them all; undo is exact."""
    env = cli_env(di_code_home, llm_server)
    repository(workspace)
    for i in range(130):
        (workspace / f"f{i:03}.txt").write_bytes(b"%d\n" % i)
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "many")
    aged(workspace)
    llm_server.script(Turn(text="hello"))
    assert di_code(env, workspace, "run", "--yes", "hi").returncode == 0
    for i in range(130):
        twin = b"twin\n" if i % 2 else b"%d\n" % (i + 1) if i % 3 else b"b\n" if i % 5 else b""
        (workspace / f"f{i:03}.txt").write_bytes(twin)
    before = contents(workspace)
    command = "for f in f*.txt; do echo tool > $f; done"
    llm_server.script(call("bash", {"command": command}, "c1"), Turn(text="done"))
    ran = di_code(env, workspace, "run", "--continue", "--yes", "--sandbox", "off", "all")
    assert ran.returncode == 0, ran.stderr
    assert "checkpoint" not in ran.stderr, ran.stderr
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == before


# 5. Outside git ------------------------------------------------------------------------------


def test_outside_git_an_edit_after_a_stopped_run_is_undone_to_the_original(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """Outside git: a run edits notes.txt and is stopped (SIGTERM) in the command after it;
    the user edits mine.txt; the session goes on and a tool edits notes.txt again. Undo back
    to before the first prompt gives notes.txt its original bytes and keeps the user's edit."""
    env = cli_env(di_code_home, llm_server)
    (workspace / "notes.txt").write_bytes(b"original\n")
    (workspace / "mine.txt").write_bytes(b"mine\n")
    edit = {"path": "notes.txt", "old_string": "original", "new_string": "first edit"}
    llm_server.script(
        call("edit", edit, "c1"),
        call("bash", {"command": "touch waiting; sleep 30"}, "c2"),
        Turn(text="never"),
    )
    running = start(env, workspace, "run", "--yes", "--sandbox", "off", "edit")
    wait_until((workspace / "waiting").exists, "the command after the edit")
    err, _ = stop(running, signal.SIGTERM)
    assert running.returncode == 143, err
    assert (workspace / "notes.txt").read_bytes() == b"first edit\n"
    (workspace / "mine.txt").write_bytes(b"mine, edited\n")
    again = {"path": "notes.txt", "content": "second\n"}
    llm_server.script(call("write", again, "c3"), Turn(text="done"))
    assert di_code(env, workspace, "run", "--continue", "--yes", "again").returncode == 0
    undone = di_code(env, workspace, "undo", "--yes", "--to", "1")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert (workspace / "notes.txt").read_bytes() == b"original\n"
    assert (workspace / "mine.txt").read_bytes() == b"mine, edited\n"


def test_outside_git_a_folder_made_a_repository_mid_prompt_keeps_the_writes_undo(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """A prompt that starts outside git, whose bash runs `git init` before the write tool
    changes notes.txt: the write's original was copied all the same, and undo restores it."""
    env = cli_env(di_code_home, llm_server)
    (workspace / "notes.txt").write_bytes(b"original\n")
    llm_server.script(
        call("bash", {"command": "git init -q"}, "c1"),
        call("write", {"path": "notes.txt", "content": "model\n"}, "c2"),
        Turn(text="done"),
    )
    ran = di_code(env, workspace, "run", "--yes", "--sandbox", "off", "init")
    assert ran.returncode == 0, ran.stderr
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert (workspace / "notes.txt").read_bytes() == b"original\n"


def _bare_layout(work: Path, other: Path) -> dict[str, str]:
    git(work, "init", "-q", "--bare", ".")
    return {}


def _git_file_to_nowhere(work: Path, other: Path) -> dict[str, str]:
    (work / ".git").write_text(f"gitdir: {other / 'gone'}\n")
    return {}


def _work_tree_elsewhere(work: Path, other: Path) -> dict[str, str]:
    git(work, "init", "-q")
    git(work, "config", "core.worktree", str(other))
    return {}


def _git_dir_in_the_environment(work: Path, other: Path) -> dict[str, str]:
    git(other, "init", "-q")
    return {"GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other)}


LAYOUTS = [_bare_layout, _git_file_to_nowhere, _work_tree_elsewhere, _git_dir_in_the_environment]


@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout.__name__[1:] for layout in LAYOUTS])
def test_a_folder_git_does_not_take_as_this_work_tree_gets_the_backups_undo(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path,
    layout: Callable[[Path, Path], dict[str, str]],
) -> None:  # fmt: skip
    """A workspace laid out as a bare repository, with a `.git` file naming nothing, with a
    work tree configured elsewhere, or run with `GIT_DIR`/`GIT_WORK_TREE` naming another
    repository: start-up finds no work tree of this folder, so the write's original is copied;
    undo restores it, and the other folder is neither recorded nor touched."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_bytes(b"the other folder's\n")
    extra = layout(workspace, other)
    (workspace / "notes.txt").write_bytes(b"original\n")
    others = contents(other)
    env = cli_env(di_code_home, llm_server, **extra)
    llm_server.script(call("write", {"path": "notes.txt", "content": "model\n"}, "c1"))
    llm_server.script(Turn(text="done"))
    ran = di_code(env, workspace, "run", "--yes", "write")
    assert ran.returncode == 0, ran.stderr
    assert (workspace / "notes.txt").read_bytes() == b"model\n"
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert (workspace / "notes.txt").read_bytes() == b"original\n"
    assert contents(other) == others
    for repository_folder in (workspace, other / ".git", workspace / ".git"):
        refs = repository_folder / "refs" / "di-code"
        assert not refs.exists(), refs
