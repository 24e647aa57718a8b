"""Files that would block a run (issue 33): write or edit on a FIFO in a folder outside git,
with the session saved (the checkpoint's backup of the target), and grep with a FIFO as its
path. Each ends with a one-line tool error, and a stop signal still works after it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.processes import SAFETY_TIMEOUT, wait_until


def outside_git(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    top = subprocess.run(["git", "rev-parse"], cwd=work, capture_output=True, check=False)
    assert top.returncode != 0, "the test needs a folder outside any git work tree"
    os.mkfifo(work / "pipe")
    return work


def tool_results(server: LLMServer) -> list[str]:
    """The tool results the model was sent, in order (OpenAI's wire: role `tool`)."""
    messages = server.requests[-1].body["messages"]
    return [str(m["content"]) for m in messages if m.get("role") == "tool"]


def start(work: Path, home: Path, server: LLMServer, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [DI_CODE, "run", "--yes", "--sandbox", "off", *args, "change the pipe"],
        cwd=work,
        env=cli_env(home, server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_write_and_edit_on_a_fifo_outside_git_are_one_line_errors(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    work = outside_git(tmp_path)
    edit = {"path": "pipe", "old_text": "a", "new_text": "b"}
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("write", {"path": "pipe", "content": "x"}),)),
        Turn(tool_calls=(ToolCallSpec("edit", edit),)),
        Turn(tool_calls=(ToolCallSpec("grep", {"pattern": "x", "path": "pipe"}),)),
        Turn(text="done"),
    )
    process = start(work, di_code_home, llm_server)
    try:
        stdout, stderr = process.communicate(timeout=SAFETY_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    assert stdout.strip() == "done"
    results = tool_results(llm_server)
    assert [r.splitlines() for r in results] == [
        ['Tool "write" failed: Not a regular file: pipe'],
        ['Tool "edit" failed: Not a regular file: pipe'],
        ['Tool "grep" failed: Not a regular file: pipe'],
    ]
    saved = [json.loads(line) for p in di_code_home.glob("sessions/*/*.jsonl") for line in
             p.read_text().splitlines()]  # fmt: skip
    assert any(entry.get("type") == "checkpoint" for entry in saved)


def test_a_stop_signal_works_after_a_write_on_a_fifo(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    work = outside_git(tmp_path)
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("write", {"path": "pipe", "content": "x"}),)),
        Turn(text="still", fault="stall", fault_after=1),
    )
    process = start(work, di_code_home, llm_server)
    try:
        wait_until(lambda: len(llm_server.requests) == 2, "the request after the write")
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=SAFETY_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 143, stderr
    assert stderr.strip().splitlines()[-1] == "di-code: terminated"


def test_an_image_attachment_that_is_a_fifo_is_refused_at_once(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    work = outside_git(tmp_path)
    done = subprocess.run(
        [DI_CODE, "run", "--image", "pipe", "what is in @pipe"],
        cwd=work,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SAFETY_TIMEOUT,
    )
    assert (done.returncode, done.stderr) == (2, "di-code: cannot read pipe: Not a regular file\n")
    assert llm_server.requests == []
