"""The one way di-code runs git: configured so that git runs no program a repository names.

A repository's `.git/config` (a cloned archive, an embedded bare repository, or one the model
or a sandboxed command wrote) can name programs that git runs on its own: clean/smudge filters,
fsmonitor, hooks, textconv, an external diff, a pager, credential helpers, ssh commands and
lazy fetches of missing objects. Command-line `-c` settings win over every config file, so each
of those is switched off here; filters cannot be blanked by name, so di-code's git never asks
for them (callers hash with `hash-object --no-filters` and read blobs with `cat-file`). The
environment is rebuilt without the `GIT_*` variables that redirect git (`GIT_DIR`,
`GIT_WORK_TREE`, `GIT_CONFIG_*`, `GIT_EXTERNAL_DIFF`, ...); only the private index a caller
names is passed on.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from di_code.ai.children import run_child

SAFE_CONFIG: tuple[str, ...] = tuple(
    part
    for setting in (
        "core.fsmonitor=false",
        "core.hooksPath=/dev/null",
        "core.attributesFile=/dev/null",
        "core.pager=cat",
        "core.sshCommand=false",
        "core.askPass=",
        "core.untrackedCache=false",
        "credential.helper=",
        "diff.external=",
        "protocol.allow=never",
        "safe.bareRepository=explicit",
        "gc.auto=0",
        "maintenance.auto=false",
    )
    for part in ("-c", setting)
)
"""Command-line settings beat the repository's config: none of these names a program."""

TIMEOUT_SECONDS = 300


class GitError(Exception):
    """A git command failed; the message is one line."""


def git_env(index_file: str | None = None) -> dict[str, str]:
    """The environment without any `GIT_*` variable (they redirect or reconfigure git), with
    the system config and the terminal prompt off, and `index_file` as the index if given."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat")
    env["GIT_NO_LAZY_FETCH"] = "1"  # git >= 2.44: a partial clone never fetches on its own
    if index_file is not None:
        env["GIT_INDEX_FILE"] = index_file
    return env


def run_git(
    cwd: Path, args: Sequence[str], *, index_file: str | None = None, stdin: bytes = b""
) -> bytes:
    """Run `git <args>` in `cwd` safely and return its output; raises GitError (one line)."""
    command = ["git", "--no-pager", *SAFE_CONFIG, *args]
    try:
        done = run_child(
            command,
            cwd=cwd,
            env=git_env(index_file),
            input=stdin,
            capture_output=True,
            timeout=TIMEOUT_SECONDS,
            bounded=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} failed: {exc}") from None
    if done.returncode != 0:
        stderr = done.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {(stderr or ['no reason given'])[-1]}")
    return done.stdout


def work_tree_top(folder: Path) -> Path | None:
    """The top of the git work tree `folder` is in, or None (no git, not a work tree, a work
    tree that does not hold `folder`, or only a bare repository: one inside a project is never
    taken as the repository)."""
    try:
        top = run_git(folder, ["rev-parse", "--show-toplevel"]).decode(errors="surrogateescape")
    except GitError:
        return None
    top = top.strip()
    if not top or not folder.resolve().is_relative_to(top):
        return None  # a `core.worktree` elsewhere: never snapshot or restore another folder
    return Path(top)
