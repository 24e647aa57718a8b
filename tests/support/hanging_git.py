"""A git found first on PATH that hangs at one step of a snapshot, once: a repository so large
that the step takes longer than anyone waits, or a git stopped in the middle of it."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

SCRIPT = """#!/bin/sh
case " $* " in *" {step} "*) if [ ! -e {seen} ]; then
  {leftover}
  echo reached > {seen}; exec sleep 30
fi;; esac
exec {git} "$@"
"""
"""Runs the real git, except the first time `step` comes: then it leaves what a git killed
there leaves (`leftover`), says so in the file `seen` and hangs for 30 s. Both are named in the
script: di-code passes git no `GIT_*` variable of the test's."""

LEFTOVERS = {
    # start-up's look for the work tree, then its status, each given 5 s (README, Config files)
    "rev-parse": ":",
    "status": ":",
    "ls-files": ":",
    "diff-files": ":",
    # the blobs are written (a pack), the answer never comes
    "fast-import": '{git} "$@" > /dev/null',
    # git's lock on the staged private index it writes the tree from
    "write-tree": ': > "$GIT_INDEX_FILE.lock"',
    # git's lock on di-code's ref, taken before the ref is written (the ref is `$#-1`)
    "update-ref": 'eval ref=\\${{$(($# - 1))}}; lock="$({git} rev-parse --git-dir)/$ref.lock"; '
    'mkdir -p "${{lock%/*}}"; : > "$lock"',
    # a prune's locks on the refs of deleted sessions, as a killed prune left them hours ago
    "update-ref --stdin": 'gitdir="$({git} rev-parse --git-dir)"; tr "\\0" "\\n" | '
    'sed -n "s/^delete //p" | while read -r ref; do mkdir -p "$gitdir/${{ref%/*}}"; '
    'touch -d "2 hours ago" "$gitdir/$ref.lock"; done',
}


def hanging_git(folder: Path, step: str) -> tuple[dict[str, str], Path]:
    """The environment entries that put a git hanging at `step` (a key of LEFTOVERS) first on
    PATH (given PATH as it is), and the file that appears once it hangs."""
    real = shutil.which("git")
    assert real is not None
    seen, programs = folder / f"{step}-reached", folder / f"{step}-bin"
    programs.mkdir()
    leftover = LEFTOVERS[step].format(git=shlex.quote(real))
    quoted = {"seen": shlex.quote(str(seen)), "git": shlex.quote(real)}
    (programs / "git").write_text(SCRIPT.format(step=step, leftover=leftover, **quoted))
    (programs / "git").chmod(0o755)
    return {"PATH": f"{programs}:{os.environ['PATH']}"}, seen
