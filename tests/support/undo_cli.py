"""A repository with staged, ignored, stashed and untracked files for the undo tests of
`di-code run`, and a planted program that leaves a marker if anything runs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.git import git


@pytest.fixture
def repo(workspace: Path) -> Path:
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "app.py").write_text("value = 1\n")
    (workspace / "script.sh").write_text("#!/bin/sh\necho hi\n")
    (workspace / "script.sh").chmod(0o755)
    (workspace / ".gitignore").write_text("*.log\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-qm", "first")
    (workspace / "staged.txt").write_text("staged\n")
    git(workspace, "add", "staged.txt")
    (workspace / "debug.log").write_text("ignored\n")
    (workspace / "stashed.txt").write_text("s\n")
    git(workspace, "stash", "push", "-q", "--include-untracked", "--", "stashed.txt")
    (workspace / "untracked.txt").write_text("mine\n")
    return workspace


def planted(tmp_path: Path) -> tuple[str, Path]:
    """A program that leaves a marker file when it runs (it also passes stdin through, as a
    filter would)."""
    marker = tmp_path / "it-ran"
    script = tmp_path / "planted.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    script.chmod(0o755)
    return str(script), marker
