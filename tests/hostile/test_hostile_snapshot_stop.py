"""HOSTILE.md "A stop never waits for work": a prompt stopped while its first snapshot runs.

The stop kills the snapshot's git wherever it is (listing the tree, comparing the private
index, writing blobs, writing the tree, pointing di-code's ref at it); what the killed git
left (a written pack, a `.lock` beside the private index or beside di-code's own ref) must
cost the next prompt nothing but time: it is recorded, and undone to the byte.

Everything runs the real `di-code` against the loopback model, in real git repositories, with
a git found first on PATH that hangs at the chosen step (tests/support/hanging_git)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pexpect
import pytest

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.chat import spawn_chat
from tests.support.git import git
from tests.support.hanging_git import LEFTOVERS, hanging_git
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn, call
from tests.support.processes import wait_until
from tests.support.snapshot_runs import TRACEBACK, di_code, repository

TOOLS = (
    Turn(
        tool_calls=(
            ToolCallSpec("write", {"path": "a.txt", "content": "by the model\n"}, "c1"),
            ToolCallSpec("write", {"path": "made.txt", "content": "new\n"}, "c2"),
        )
    ),
    call("bash", {"command": "rm b.txt"}, "c3"),
    Turn(text="done"),
)


def files(work: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in work.iterdir() if p.is_file()}


@pytest.mark.parametrize("step", sorted(set(LEFTOVERS) - {"update-ref --stdin"}))
def test_a_snapshot_stopped_at_each_step_costs_the_next_prompt_nothing(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path, step: str
) -> None:
    """A prompt, then another stopped (SIGTERM) while its snapshot hangs at `step`, then a
    third whose tools change files: it is recorded (no warning) and undone to the byte."""
    repository(workspace)
    env = cli_env(di_code_home, llm_server)
    llm_server.script(Turn(text="hello"))
    first = di_code(env, workspace, "run", "--yes", "hi")  # the private index, a kept tree
    assert first.returncode == 0, first.stderr
    (workspace / "a.txt").write_bytes(b"a changed by the user\n")  # a new blob, a new tree
    (workspace / "untracked.txt").write_bytes(b"u\n")

    hanging, seen = hanging_git(tmp_path, step)
    llm_server.script(Turn(text="never", fault="stall", fault_after=0))
    asked = len(llm_server.requests)
    running = subprocess.Popen(
        [DI_CODE, "run", "--continue", "--yes", "wait"], cwd=workspace,
        env=env | hanging, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_until(lambda: len(llm_server.requests) > asked, "the request")
        wait_until(seen.exists, f"the snapshot's {step}")
        running.send_signal(signal.SIGTERM)
        _, err = running.communicate(timeout=30)
    finally:
        running.kill()
    assert running.returncode == 143, err
    assert TRACEBACK not in err

    before = files(workspace)
    llm_server.script(*TOOLS)
    again = di_code(env, workspace, "run", "--continue", "--yes", "change")
    assert again.returncode == 0, again.stderr
    assert "checkpoint" not in again.stderr, again.stderr
    assert files(workspace) != before
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert files(workspace) == before


TURN_ENDS_WITHIN = 10.0
"""The hanging listing takes 30 s: a turn that waited for it would end after that."""


def test_ctrl_c_in_chat_while_the_first_snapshot_runs_ends_the_turn_at_once(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """Chat's Ctrl-C before the model answers: the turn ends without waiting for the snapshot
    that lists the tree, and the next prompt is answered and recorded."""
    repository(workspace)
    hanging, seen = hanging_git(tmp_path, "ls-files")
    llm_server.script(Turn(text="never", fault="stall", fault_after=0), *TOOLS)
    home = {"DI_CODE_HOME": str(di_code_home), "DI_CODE_DISCOVERY": ""}
    child = spawn_chat(llm_server, workspace, "--yes", "--sandbox", "off", env=home | hanging)
    try:
        child.expect("›")
        child.sendline("wait")
        wait_until(lambda: bool(llm_server.requests), "the request")
        wait_until(seen.exists, "the snapshot's listing")
        stopped = time.monotonic()
        child.sendcontrol("c")
        child.expect("aborted")
        took = time.monotonic() - stopped
        before = files(workspace)
        child.sendline("change")
        child.expect("done")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert took < TURN_ENDS_WITHIN, f"the turn ended {took:.1f} s after Ctrl-C"
    assert files(workspace) != before
    undone = di_code(cli_env(di_code_home, llm_server), workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert files(workspace) == before


def test_a_stop_while_a_tool_runs_still_records_what_undo_needs(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """SIGTERM while bash runs, after it changed a file: the stop ends the tool, but the
    snapshot after it is taken whatever the stop (a tool ran), so undo gives the file back."""
    repository(workspace)
    before = files(workspace)
    command = "printf more >> b.txt && echo > changed && sleep 30"
    llm_server.script(call("bash", {"command": command}, "c1"), Turn(text="never"))
    env = cli_env(di_code_home, llm_server)
    running = subprocess.Popen(
        [DI_CODE, "run", "--yes", "--sandbox", "off", "change"], cwd=workspace, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_until((workspace / "changed").exists, "the command's change")
        running.send_signal(signal.SIGTERM)
        _, err = running.communicate(timeout=30)
    finally:
        running.kill()
    assert running.returncode == 143, err
    assert "checkpoint" not in err, err
    assert files(workspace) != before
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert files(workspace) == before


def test_a_prune_stopped_hours_ago_costs_a_later_prompt_nothing(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path
) -> None:
    """A session is deleted; the next run's prune of its refs is stopped, leaving git's locks
    on them (hours old). A later prompt is recorded and undone, and the refs are gone."""
    repository(workspace)
    env = cli_env(di_code_home, llm_server)
    llm_server.script(Turn(text="hello"))
    assert di_code(env, workspace, "run", "--yes", "hi").returncode == 0
    [deleted] = di_code_home.rglob("*.jsonl")
    deleted.unlink()
    dead = deleted.stem.rpartition("_")[2]
    assert dead in git(workspace, "for-each-ref", "refs/di-code/")
    hanging, seen = hanging_git(tmp_path, "update-ref --stdin")
    llm_server.script(Turn(text="never", fault="stall", fault_after=0))
    running = subprocess.Popen(
        [DI_CODE, "run", "--yes", "wait"], cwd=workspace, env=env | hanging,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_until(lambda: len(llm_server.requests) > 1, "the request")
        wait_until(seen.exists, "the prune")
        running.send_signal(signal.SIGTERM)
        _, err = running.communicate(timeout=30)
    finally:
        running.kill()
    assert running.returncode == 143, err
    assert list((workspace / ".git").rglob("*.lock"))

    before = files(workspace)
    llm_server.script(*TOOLS)
    again = di_code(env, workspace, "run", "--yes", "change")
    assert again.returncode == 0, again.stderr
    assert "checkpoint" not in again.stderr, again.stderr
    assert dead not in git(workspace, "for-each-ref", "refs/di-code/")
    undone = di_code(env, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert files(workspace) == before
