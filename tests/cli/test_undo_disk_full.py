"""A full disk while di-code records a checkpoint or an undo (a real EFBIG: the file size
limit, RLIMIT_FSIZE, set in the di-code process, which needs no root): one line, no
traceback, a session file of whole lines, and `undo` never says "undone" when the undo is not
whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_run import di_code
from tests.support.git import git
from tests.support.llm_server import LLMServer, Turn, call


def prepared(root: Path, in_git: bool) -> Path:
    workspace = root / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "app.py").write_text("value = 1\n")
    if in_git:
        git(workspace, "init", "-q", "-b", "main")
        git(workspace, "add", ".")
        git(workspace, "commit", "-qm", "first")
    return workspace


def session_file(home: Path) -> Path:
    (path,) = home.glob("sessions/*/*.jsonl")
    return path


def whole_lines(path: Path) -> list[dict[str, object]]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), data[-200:]
    return [json.loads(line) for line in data.splitlines()]


def edit_then_done() -> tuple[Turn, ...]:
    return (call("edit", {"path": "app.py", "old_text": "1", "new_text": "2"}, "c1"), Turn("done"))


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "files"])
def test_a_checkpoint_the_full_disk_refuses_is_one_line(
    llm_server: LLMServer, tmp_path: Path, in_git: bool
) -> None:
    # the same prompt once with room, to learn where its last checkpoint line starts
    seen_home, home = tmp_path / "seen" / "home", tmp_path / "full" / "home"
    llm_server.script(*edit_then_done())
    seen = prepared(tmp_path / "seen", in_git)
    assert di_code(seen_home, llm_server, seen, "run", "--yes", "change it").returncode == 0
    lines = session_file(seen_home).read_bytes().splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if json.loads(line)["type"] == "checkpoint")
    start = sum(map(len, lines[:last]))

    llm_server.script(*edit_then_done())
    workspace = prepared(tmp_path / "full", in_git)
    done = di_code(
        home,
        llm_server,
        workspace,
        "run",
        "--yes",
        "change it",
        file_limit=start + len(lines[last]) // 2,
    )
    assert done.returncode == 1, done.stderr  # a session write failed: run says so, fails
    assert "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if "checkpoint" in line]
    assert len(said) == 1 and "File too large" in said[0], done.stderr
    assert said[0].startswith("di-code: checkpoint not recorded, undo may miss")
    whole_lines(session_file(home))

    undone = di_code(home, llm_server, workspace, "undo", "--yes")
    assert "Traceback" not in undone.stderr
    # the checkpoint taken before the edit was recorded in full (the disk filled in the last
    # one): undo has what it needs, and restores
    assert undone.returncode == 0, undone.stderr
    assert "restored app.py" in undone.stdout.splitlines()
    assert undone.stdout.splitlines()[-1] == "undone: prompt 1 (change it)"
    assert (workspace / "app.py").read_text() == "value = 1\n"


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "files"])
def test_an_undo_the_full_disk_cannot_record_is_not_called_undone(
    llm_server: LLMServer, tmp_path: Path, in_git: bool
) -> None:
    home = tmp_path / "home"
    workspace = prepared(tmp_path, in_git)
    llm_server.script(*edit_then_done())
    assert di_code(home, llm_server, workspace, "run", "--yes", "change it").returncode == 0
    full = session_file(home).stat().st_size

    undone = di_code(home, llm_server, workspace, "undo", "--yes", file_limit=full)
    assert undone.returncode == 1, undone.stderr
    assert "Traceback" not in undone.stderr and "internal error" not in undone.stderr
    assert "undone:" not in undone.stdout
    assert "restored app.py" in undone.stdout.splitlines()  # what happened is said
    errors = undone.stderr.splitlines()
    assert any(line.startswith("di-code: the undo could not be recorded: ") for line in errors)
    assert errors[-1] == "di-code: prompt 1 is not fully undone"
    assert (workspace / "app.py").read_text() == "value = 1\n"
    assert session_file(home).stat().st_size == full  # no half line
    whole_lines(session_file(home))
