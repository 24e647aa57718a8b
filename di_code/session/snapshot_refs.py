"""The refs that keep snapshot trees alive: `refs/di-code/<home>/<session>/<tree>`, which
`git gc` respects and no branch command shows; each DI_CODE_HOME prunes only its own.

A git killed while it wrote one (a stopped snapshot, a killed di-code) leaves the ref's
`.lock`, and git then refuses that ref for good. A session's refs are written only by the one
process that holds the session, one at a time, so a lock on one of them is always a killed
git's: it is removed and the ref written again. Pruning is housekeeping: when it fails (a lock
another home's run holds, or a killed prune left) the dead refs stay for a later prune, and the
snapshot goes on.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from di_code.session.git_run import GitError, GitStopped

logger = logging.getLogger(__name__)

REF_PREFIX = "refs/di-code/"

Git = Callable[..., bytes]
"""`GitSnapshots.git`: runs one git command (args, stdin=) in the work tree; its output."""


class SnapshotRefs:
    def __init__(self, git: Git, top: Path, scope: str) -> None:
        self.git = git
        self.top = top
        self.scope = scope
        """`<home>/` : the refs of one DI_CODE_HOME live under REF_PREFIX + scope."""
        self.referenced: set[str] = set()
        """Trees a ref of this home points at (listed by `prune`): they are in the
        repository, so a cached tree among them is taken without asking git."""
        self._refs: set[str] = set()
        """Those refs' names: a tree already kept by this session is not kept again."""
        self._kept: set[str] = set()

    def keep(self, session_id: str, tree: str) -> None:
        """Point a ref of this home and session at `tree` so gc keeps it (and its blobs)."""
        ref = f"{REF_PREFIX}{self.scope}{session_id}/{tree}"
        if tree in self._kept or ref in self._refs:
            return
        try:
            self.git(["update-ref", ref, tree])
        except GitStopped:
            raise
        except GitError:
            if not self._unlocked(ref):
                raise
            self.git(["update-ref", ref, tree])
        self._kept.add(tree)

    def _unlocked(self, ref: str) -> bool:
        """Remove the lock a killed git left on this session's `ref`; whether there was one."""
        common = self.git(["rev-parse", "--git-common-dir"]).decode(errors="surrogateescape")
        try:
            os.unlink(self.top / common.removesuffix("\n") / f"{ref}.lock")
        except FileNotFoundError:
            return False
        return True

    def prune(self, live_sessions: set[str]) -> None:
        """Delete this home's refs of every session not in `live_sessions` (its file was
        deleted), so `git gc` can drop what only they kept; other homes' refs stay."""
        scope = REF_PREFIX + self.scope
        listed = self.git(["for-each-ref", "--format=%(objectname) %(refname)", scope]).decode()
        refs: dict[str, str] = {}  # ref -> the object it points at (a ref holds no space)
        for line in listed.splitlines():
            name, _, ref = line.partition(" ")
            refs[ref] = name
        dead = [ref for ref in refs if ref[len(scope) :].split("/")[0] not in live_sessions]
        self.referenced = {name for ref, name in refs.items() if ref not in dead}
        self._refs = set(refs).difference(dead)
        if not dead:
            return
        deletes = "".join(f"delete {ref}\0\0" for ref in dead)  # no old value
        try:
            self.git(["update-ref", "--stdin", "-z"], stdin=deletes.encode())
        except GitStopped:
            raise
        except GitError as exc:
            logger.warning("undo refs of deleted sessions kept for a later run: %s", exc)
