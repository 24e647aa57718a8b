"""Git run by the tests on the repositories they make."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """`git ARGS` in `repo` as a fixed author and committer; its output (the test fails, showing
    git's error, when git does)."""
    identity = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**os.environ, **identity, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def past_this_second() -> None:
    """Return once the clock is in its next second: the private index gives a file stat data
    only once its status changed in an earlier second than the snapshot's (`index_file`), so a
    test that counts what a cached snapshot spares waits for it (a positive condition)."""
    second = time.time_ns() // 1_000_000_000
    while time.time_ns() // 1_000_000_000 == second:
        time.sleep(0.01)


def logging_git(folder: Path, log: Path) -> Path:
    """A `git` first on PATH that writes each call's arguments to `log`, then runs git."""
    real = subprocess.run(["which", "git"], capture_output=True, text=True, check=True).stdout
    folder.mkdir()
    shim = folder / "git"
    shim.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real.strip()} "$@"\n')
    shim.chmod(0o755)
    return folder


def subcommands(log: Path) -> list[str]:
    """The git subcommand of each logged call (what follows git's own options)."""
    found = []
    for call in log.read_text().splitlines():
        words = iter(call.split())
        found += [next(w for w in words if not (w.startswith("-") and (w != "-c" or next(words))))]
    return found


LONG_AGO = 1_700_000_000
"""An mtime (2023) far older than any snapshot's racy window."""


def aged(repo: Path) -> None:
    """Give every file of the work tree an old mtime and wait until their status changes are
    of an earlier second: the next snapshot records real stat data for them all."""
    for _, dirs, files, folder in os.fwalk(repo):  # by folder: paths beyond PATH_MAX too
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            os.utime(name, (LONG_AGO, LONG_AGO), dir_fd=folder, follow_symlinks=False)
    past_this_second()
