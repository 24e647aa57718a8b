"""A session write the disk refuses (a real EFBIG: RLIMIT_FSIZE in the di-code process, which
needs no root) is said on stderr in one line and makes `run` exit 1; the file keeps whole
lines and loads, and `--continue` goes on with what was saved (it used to be exit 0 with
nothing said, the message missing)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli_run import di_code
from tests.support.llm_server import WHOLE, LLMServer, ToolCallSpec, Turn


def test_an_answer_the_full_disk_refuses_is_said_and_run_fails(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(text="first answer"))
    assert di_code(di_code_home, llm_server, workspace, "run", "first").returncode == 0
    (session,) = di_code_home.glob("sessions/*/*.jsonl")
    size = session.stat().st_size

    long_answer = "long answer " * 20_000  # its line cannot fit; the prompt's line can
    llm_server.script(Turn(text=long_answer, chunk_size=WHOLE))  # its size fails, not its deltas
    done = di_code(
        di_code_home, llm_server, workspace, "run", "-c", "second", file_limit=size + 100_000
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    said = [line for line in done.stderr.splitlines() if "session" in line]
    assert len(said) == 1, done.stderr
    assert said[0].startswith("di-code: cannot write session ") and "File too large" in said[0]
    data = session.read_bytes()
    assert data.endswith(b"\n")
    entries = [json.loads(line) for line in data.splitlines()]
    assert "second" in json.dumps(entries)  # what fitted was saved
    assert long_answer not in json.dumps(entries)

    llm_server.script(Turn(text="third answer"))
    went_on = di_code(di_code_home, llm_server, workspace, "run", "-c", "third")
    assert went_on.returncode == 0, went_on.stderr
    assert went_on.stderr == ""


def test_a_new_session_whose_first_line_does_not_fit_leaves_no_empty_file(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(text="answer"))
    done = di_code(di_code_home, llm_server, workspace, "run", "first", file_limit=10)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    for path in di_code_home.glob("sessions/*/*.jsonl"):
        assert path.stat().st_size > 0  # an empty file would break the next --continue
    llm_server.script(Turn(text="again"))
    later = di_code(di_code_home, llm_server, workspace, "run", "-c", "more")
    assert "Traceback" not in later.stderr and "not a di-code session" not in later.stderr


@pytest.fixture
def small_home(tmp_path: Path) -> Iterator[Path]:
    """A DI_CODE_HOME on a tmpfs of its own, 2 MB: one that can really fill up (ENOSPC)."""
    home = tmp_path / "small-home"
    home.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(home)])
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield home
    finally:
        subprocess.run(["umount", "-l", str(home)], check=True)


def test_a_full_home_loses_the_tool_call_message_no_more_silently(
    llm_server: LLMServer, small_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(text="first answer"))
    assert di_code(small_home, llm_server, workspace, "run", "first").returncode == 0
    (session,) = small_home.glob("sessions/*/*.jsonl")
    before = session.read_bytes()
    free = os.statvfs(small_home)
    filler = small_home / "filler"
    filler.write_bytes(b"x" * (free.f_bavail * free.f_frsize - 64 * 1024))  # 64 KB stay free

    content = "line of the new file\n" * 10_000  # 210 KB: its call's message cannot fit
    write = ToolCallSpec("write", {"path": "new.txt", "content": content}, "c1")
    llm_server.script(Turn(tool_calls=(write,), chunk_size=WHOLE), Turn(text="written"))
    done = di_code(small_home, llm_server, workspace, "run", "--yes", "-c", "write it")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    said = [line for line in done.stderr.splitlines() if "cannot write session" in line]
    assert len(said) == 1 and "No space left on device" in said[0], done.stderr
    data = session.read_bytes()
    assert data.startswith(before) and data.endswith(b"\n")
    [json.loads(line) for line in data.splitlines()]  # whole lines only

    filler.unlink()
    llm_server.script(Turn(text="third answer"))
    went_on = di_code(small_home, llm_server, workspace, "run", "-c", "go on")
    assert went_on.returncode == 0, went_on.stderr
