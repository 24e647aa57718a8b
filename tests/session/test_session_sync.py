"""A session entry reaches the disk (fsync) without the event loop waiting for it.

The fsync itself is made slow for real: `strace` delays every `fsync` of a real `di-code run`
by DELAY seconds in the kernel's syscall path, and the run's loops are watched as
tests/support/loop_watch.py watches them (each callback that held the loop is reported; a
thread held in a syscall holds it). Before, the model and prompt entries were fsync'ed on the
loop: a callback held it for the whole delay, once per entry, and the first request waited for
both.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from di_code.session import SessionStore
from tests.cli.conftest import DI_CODE, cli_env
from tests.support import loop_watch
from tests.support.llm_server import LLMServer, Turn
from tests.support.strace import MISSING, STRACE, strace_works

CHECKPOINT_LOST = "di-code: checkpoint not recorded, undo may miss this prompt's changes"

DELAY = 1.0
"""Seconds each fsync is held in the kernel: far above any callback of a loaded machine."""


def traced_fsync(trace: Path, inject: str) -> list[str]:
    """The command prefix that runs a program with `inject` (strace's tampering) done to
    every fsync of its threads and children, each call written to `trace` with its path."""
    if not strace_works():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI cannot slow an fsync: {MISSING}", pytrace=False)
        pytest.skip(MISSING)
    assert STRACE is not None
    return [
        *(STRACE, "-f", "--seccomp-bpf", "-qq", "-y", "-e", "signal=none", "-e", "trace=fsync"),
        *("-e", f"inject=fsync:{inject}", "-o", str(trace)),
    ]


def slowed_fsync(trace: Path) -> list[str]:
    """`traced_fsync` with every fsync held DELAY seconds."""
    return traced_fsync(trace, f"delay_enter={int(DELAY * 1_000_000)}")


def held_seconds(log: Path) -> list[float]:
    """How long each slow callback of the watched processes held its loop."""
    return [
        float(m) for m in re.findall(r"took (\d+\.\d+) seconds", "\n".join(loop_watch.seen_in(log)))
    ]


def test_a_slow_fsync_never_holds_the_loop_and_every_entry_is_synced_before_exit(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    trace, log = tmp_path / "fsync.trace", tmp_path / "slow.log"
    llm_server.script(Turn(text="Hello."))
    env = loop_watch.watched(cli_env(di_code_home, llm_server), log)
    done = subprocess.run(
        [*slowed_fsync(trace), DI_CODE, "run", "--output-format", "json", "hi"],
        cwd=workspace,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr

    held = [seconds for seconds in held_seconds(log) if seconds >= DELAY * 0.9]
    assert held == [], f"the loop waited for an fsync: {loop_watch.seen_in(log)}"

    calls = trace.read_text().splitlines()
    session_syncs = [line for line in calls if "fsync(" in line and "sessions" in line]
    assert session_syncs, "no session entry was fsync'ed"
    started = sum("fsync(" in line for line in calls)
    finished = sum(re.search(r"\) += -?\d+", line) is not None for line in calls)
    assert finished == started, f"the process ended during an fsync:\n{trace.read_text()}"

    session = SessionStore(di_code_home).latest(workspace, write=False)
    assert session is not None and session.warnings == []
    assert [m.role for m in session.context()] == ["user", "assistant"]


def test_a_failed_fsync_is_one_line_and_exit_1(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """The disk refuses every sync (EIO, as strace makes each fsync fail): the run says so in
    one line (and the checkpoint it could not record in its own) and exits 1, as with a failed
    write of an entry. Which write finds a failed sync first depends on when the sync ends: the
    prompt's runs while the answer streams, so the answer's write finds it, or (an answer
    written before it failed) the checkpoint's, or both find one each; never one per entry."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    llm_server.script(Turn(text="Hello."))
    done = subprocess.run(
        [*traced_fsync(tmp_path / "fsync.trace", "error=EIO"), DI_CODE, "run", "hi"],
        cwd=workspace,
        env=cli_env(di_code_home, llm_server),
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "Input/output error" in line]
    assert all("cannot write session" in line for line in errors), done.stderr
    said = sorted("checkpoint" if CHECKPOINT_LOST in line else "session" for line in errors)
    assert said in (["session"], ["checkpoint"], ["checkpoint", "session"]), done.stderr


SYNC_LAST = """
    import asyncio, sys
    from pathlib import Path
    from di_code.ai.types import UserMessage
    from di_code.session import SessionStore

    async def main() -> None:
        session = SessionStore(Path(sys.argv[1])).create(Path(sys.argv[2]))
        session.append_message(UserMessage.of("hi"))  # written; its fsync fails on the thread
        assert session.write_error is None
        await session.synced(lambda line: print("reported:", line))
        assert session.write_error is not None

    asyncio.run(main())
"""


def test_a_failed_fsync_of_the_last_entry_is_the_sessions_write_error(tmp_path: Path) -> None:
    """No write follows the last entry to report its failed sync: `synced` does, in one line
    (the run's end waits for it, says it, and exits 1)."""
    done = subprocess.run(
        [
            *traced_fsync(tmp_path / "fsync.trace", "error=EIO"),
            *(
                sys.executable,
                "-c",
                textwrap.dedent(SYNC_LAST),
                str(tmp_path / "home"),
                str(tmp_path),
            ),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    reported = [line for line in done.stdout.splitlines() if line.startswith("reported:")]
    assert len(reported) == 1 and "Input/output error" in reported[0], done.stdout
