"""The git line of the system prompt's environment block: branch, a short bounded status, and
what it says where there is no repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from di_code.setup.environment import STATUS_LINES, git_state


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def test_a_clean_repository_names_its_branch(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "work")
    (tmp_path / "a.txt").write_text("a\n")
    git(tmp_path, "add", "a.txt")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    assert git_state(tmp_path).text == "Git: branch work; working tree clean"


def test_many_changes_are_cut_and_counted(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "work")
    for n in range(STATUS_LINES + 5):
        (tmp_path / f"f{n:02}.txt").write_text("x\n")
    lines = git_state(tmp_path).text.splitlines()
    head = f"Git: branch work (no commits yet); {STATUS_LINES + 5} changed"
    assert lines[0] == f"{head} (as git status --short):"
    assert lines[1] == "  ?? f00.txt" and len(lines) == STATUS_LINES + 2
    assert lines[-1] == "  ... and 5 more"


def test_a_detached_head_is_named_so(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "work")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
        "-m", "one")  # fmt: skip
    git(tmp_path, "checkout", "-q", "--detach")
    assert git_state(tmp_path).text == "Git: detached HEAD; working tree clean"


def test_a_folder_outside_any_repository_says_so(tmp_path: Path) -> None:
    assert git_state(tmp_path).text == "Git: not a git repository"  # /tmp holds no repository


def test_the_status_runs_no_filter_the_repository_names(tmp_path: Path) -> None:
    """`git status` reads a file whose stat changed but not its size through the clean filter
    `.gitattributes` names: the filters of the repository's config are emptied for it."""
    git(tmp_path, "init", "-q", "-b", "work")
    (tmp_path / "app.py").write_text("value = 1\n")
    git(tmp_path, "add", "app.py")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    marker = tmp_path.parent / f"{tmp_path.name}-ran"
    program = tmp_path.parent / f"{tmp_path.name}-filter.sh"
    program.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\n")
    program.chmod(0o755)
    (tmp_path / ".gitattributes").write_text("* filter=x\n")
    with (tmp_path / ".git" / "config").open("a") as config:
        config.write(f'[filter "x"]\n\tclean = {program}\n\tsmudge = {program}\n')
    (tmp_path / "app.py").write_text("value = 2\n")  # the same size: only its content tells
    assert git_state(tmp_path).text.startswith("Git: branch work; 2 changed")
    assert not marker.exists()
