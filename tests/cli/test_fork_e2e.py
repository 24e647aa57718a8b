"""`--fork` with `--continue` or `--session` (issue 45 item 2): the run goes on in a new
session holding the conversation so far; the original session file is left as it was."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import RunDiCode, request_text
from tests.support.llm_server import LLMServer, Turn


def session_files(home: Path) -> list[Path]:
    return sorted(home.glob("sessions/*/*.jsonl"))


def test_continue_with_fork_goes_on_in_a_copy(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    llm_server.script(Turn(text="First."), Turn(text="Forked on."), Turn(text="Original on."))
    assert run_di_code("run", "PROMPT-ONE").returncode == 0
    [original] = session_files(di_code_home)
    before = original.read_bytes()

    done = run_di_code("run", "-c", "--fork", "PROMPT-FORKED")
    assert done.returncode == 0, done.stderr
    assert "PROMPT-ONE" in request_text(llm_server.requests[-1].body)  # the history went on
    assert original.read_bytes() == before
    [forked] = [path for path in session_files(di_code_home) if path != original]
    assert b"PROMPT-ONE" in forked.read_bytes() and b"PROMPT-FORKED" in forked.read_bytes()

    session_id = original.stem.partition("_")[2]
    done = run_di_code("run", "--session", session_id[:8], "PROMPT-ORIGINAL")
    assert done.returncode == 0, done.stderr
    last = request_text(llm_server.requests[-1].body)
    assert "PROMPT-ONE" in last and "PROMPT-FORKED" not in last


def test_fork_without_a_session_to_fork_is_one_line(run_di_code: RunDiCode) -> None:
    done = run_di_code("run", "--fork", "hello")
    assert done.returncode == 2
    assert done.stderr == "di-code: --fork needs --continue or --session ID: the session to fork\n"
