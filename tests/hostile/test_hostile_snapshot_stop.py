"""HOSTILE.md "A stop never waits for work": a prompt stopped while its first snapshot runs.

The stop kills the snapshot's git wherever it is (listing the tree, comparing the private
index, writing blobs, writing the tree, pointing di-code's ref at it); what the killed git
left (a written pack, a `.lock` beside the private index or beside di-code's own ref) must
cost the next prompt nothing but time: it is recorded, and undone to the byte.

Everything runs the real `di-code` against the loopback model, in real git repositories, with
a git found first on PATH that does its step's part and then hangs at the chosen step."""

from __future__ import annotations

import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.git import git
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn, call
from tests.support.processes import wait_until

TRACEBACK = "Traceback"

HANGING_GIT = """#!/bin/sh
case " $* " in *" {step} "*)
  {leftover}
  echo reached >> {seen}; exec sleep 30;; esac
exec {git} "$@"
"""
"""A git that, at `step`, leaves what a git killed there leaves (`leftover`), says so in the
file `seen` and hangs (di-code passes git no `GIT_*` variable of the test's)."""

LEFTOVERS = {
    "ls-files": ":",
    "diff-files": ":",
    # the blobs are written (a pack), the answer never comes
    "fast-import": '{git} "$@" > /dev/null',
    # git's lock on the staged private index it writes the tree from
    "write-tree": ': > "$GIT_INDEX_FILE.lock"',
    # git's lock on di-code's ref, taken before the ref is written (the ref is `$#-1`)
    "update-ref": 'eval ref=\\${{$(($# - 1))}}; lock="$({git} rev-parse --git-dir)/$ref.lock"; '
    'mkdir -p "${{lock%/*}}"; : > "$lock"',
}

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


def di_code(env: dict[str, str], work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [DI_CODE, *args], cwd=work, env=env, input="", capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert TRACEBACK not in done.stderr, done.stderr
    return done


@pytest.mark.parametrize("step", sorted(LEFTOVERS))
def test_a_snapshot_stopped_at_each_step_costs_the_next_prompt_nothing(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path, step: str
) -> None:
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "a.txt").write_bytes(b"a\n")
    (workspace / "b.txt").write_bytes(b"b\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "first")
    env = cli_env(di_code_home, llm_server)
    llm_server.script(Turn(text="hello"))
    first = di_code(env, workspace, "run", "--yes", "hi")  # the private index, a kept tree
    assert first.returncode == 0, first.stderr
    (workspace / "a.txt").write_bytes(b"a changed by the user\n")  # a new blob, a new tree
    (workspace / "untracked.txt").write_bytes(b"u\n")

    seen = tmp_path / "seen"
    hanging = tmp_path / "bin"
    hanging.mkdir()
    real = shutil.which("git")
    assert real is not None
    leftover = LEFTOVERS[step].format(git=shlex.quote(real))
    script = HANGING_GIT.format(
        step=step, leftover=leftover, seen=shlex.quote(str(seen)), git=shlex.quote(real)
    )
    (hanging / "git").write_text(script)
    (hanging / "git").chmod(0o755)
    llm_server.script(Turn(text="never", fault="stall", fault_after=0))
    asked = len(llm_server.requests)
    running = subprocess.Popen(
        [DI_CODE, "run", "--continue", "--yes", "wait"], cwd=workspace,
        env={**env, "PATH": f"{hanging}:{env['PATH']}"}, stdin=subprocess.DEVNULL,
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
