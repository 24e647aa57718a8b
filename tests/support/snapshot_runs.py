"""Running `di-code` against the loopback model in a real git repository while its snapshots are
attacked (tests/hostile/test_hostile_snapshot_faults.py, test_hostile_patched_trees.py): the
repository, its files' bytes, a run, one stalled at a snapshot's git step, and a stop."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from di_code.session.git_snapshot import GitSnapshots
from di_code.session.stat_cache import StatCache
from tests.cli.conftest import DI_CODE
from tests.support.git import git
from tests.support.hanging_git import hanging_git
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.processes import wait_until

TRACEBACK = "Traceback"
CHANGE = (
    Turn(
        tool_calls=(
            ToolCallSpec("write", {"path": "a.txt", "content": "by the model\n"}, "c1"),
            ToolCallSpec("write", {"path": "made.txt", "content": "new\n"}, "c2"),
        )
    ),
    Turn(text="done"),
)
STOP_BOUND = 8.0
"""README: a stop waits for no snapshot before a tool ran (within a second), and its own bound
is 2 s after one ran; generous, the machine is shared."""
STALL = Turn(text="never", fault="stall", fault_after=0)


def repository(folder: Path) -> None:
    git(folder, "init", "-q", "-b", "main")
    (folder / "a.txt").write_bytes(b"a\n")
    (folder / "b.txt").write_bytes(b"b\n")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "first")


def contents(work: Path) -> dict[bytes, bytes]:
    """Every file under `work` but `.git`'s, by its name's bytes."""
    found: dict[bytes, bytes] = {}
    for folder, dirs, names in os.walk(os.fsencode(work)):
        dirs[:] = [d for d in dirs if d != b".git"]
        for name in names:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, os.fsencode(work))] = Path(os.fsdecode(path)).read_bytes()
    return found


def di_code(env: dict[str, str], work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [DI_CODE, *args], cwd=work, env=env, input="", capture_output=True, text=True,
        errors="replace", timeout=120,
    )  # fmt: skip
    assert TRACEBACK not in done.stderr, done.stderr
    return done


def start(env: dict[str, str], work: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [DI_CODE, *args], cwd=work, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def stalled(
    llm_server: LLMServer, env: dict[str, str], work: Path, folder: Path, step: str, *args: str
) -> subprocess.Popen[str]:
    """`di-code ARGS` whose model never answers, once its request went out and its first
    snapshot hangs at `step`."""
    hanging, seen = hanging_git(folder, step)
    llm_server.script(STALL)
    asked = len(llm_server.requests)
    running = start(env | hanging, work, *args)
    wait_until(lambda: len(llm_server.requests) > asked, "the request")
    wait_until(seen.exists, f"the snapshot's {step}")
    return running


def stop(running: subprocess.Popen[str], number: int) -> tuple[str, float]:
    """Send `number`; stderr and the seconds until the process ended."""
    sent = time.monotonic()
    running.send_signal(number)
    try:
        _, err = running.communicate(timeout=60)
    finally:
        running.kill()
    return err, time.monotonic() - sent


def undone_exactly(
    llm_server: LLMServer, env: dict[str, str], work: Path, *first: str
) -> None:  # fmt: skip
    """The next prompt (its tools change files) is recorded, and `undo` gives back the bytes
    from before it."""
    before = contents(work)
    llm_server.script(*CHANGE)
    again = di_code(env, work, "run", *first, "--yes", "change")
    assert again.returncode == 0, again.stderr
    assert "checkpoint" not in again.stderr, again.stderr
    assert contents(work) != before
    undone = di_code(env, work, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    after = contents(work)
    differ = sorted(
        name for name in after.keys() | before.keys() if after.get(name) != before.get(name)
    )
    assert not differ, (differ, undone.stdout, undone.stderr)


def snapshot(repo: Path, cache: Path) -> str:
    """One run's snapshot tree of `repo` (the session API) with the private index a previous
    run left beside `cache`."""
    stat_cache = StatCache(cache)
    tree = GitSnapshots(repo, stat_cache=stat_cache).take().tree
    stat_cache.save()
    return tree
