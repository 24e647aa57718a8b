"""One writer per session: while a `run --continue` is writing a session, a second
`--continue`, `--session` or `undo --yes` of it is refused with one line (before it numbers a
prompt, takes a checkpoint or restores a file); reading it (`undo --list`) still works, and
the session is free again the moment the writer dies, even by SIGKILL."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from tests.cli.conftest import started
from tests.support.llm_server import LLMServer, Turn


def finished(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def wait_requests(server: LLMServer, count: int) -> None:
    deadline = time.monotonic() + 60
    while len(server.requests) < count:
        assert time.monotonic() < deadline, "the writer never asked the model"
        time.sleep(0.05)


def test_a_second_writer_is_refused_while_the_first_runs(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a original\n")
    llm_server.script(Turn(text="first"))
    assert finished(started(di_code_home, llm_server, workspace, "run", "first"))[0] == 0
    (session,) = di_code_home.glob("sessions/*/*.jsonl")
    session_id = session.stem.partition("_")[2]

    llm_server.script(Turn(text="writing", fault="stall", fault_after=1))
    writer = started(di_code_home, llm_server, workspace, "run", "--continue", "--yes", "a")
    try:
        wait_requests(llm_server, 2)  # the first writer holds the session, mid-prompt
        before = session.read_bytes()
        for args in (
            ("run", "--continue", "--yes", "b"),
            ("run", "--session", session_id[:8], "--yes", "b"),
            ("undo", "--yes"),
        ):
            code, out, err = finished(started(di_code_home, llm_server, workspace, *args))
            assert code == 2, (args, out, err)
            assert err.splitlines() == [
                f"di-code: Session {session_id[:12]} is in use by another di-code process "
                f"(pid {writer.pid}): wait for it to end, or start a new session."
            ], (args, err)
        assert len(llm_server.requests) == 2  # the refused ones asked the model nothing
        assert session.read_bytes() == before  # and wrote nothing
        code, out, err = finished(started(di_code_home, llm_server, workspace, "undo", "--list"))
        assert code == 0 and "Traceback" not in err
    finally:
        writer.kill()  # SIGKILL: the kernel lets the session go
        writer.wait(timeout=30)

    llm_server.script(Turn(text="after"))
    code, out, err = finished(started(di_code_home, llm_server, workspace, "run", "-c", "c"))
    assert code == 0, err
    assert "after" in out
    assert list(di_code_home.glob("sessions/*/*.jsonl")) == [session]
