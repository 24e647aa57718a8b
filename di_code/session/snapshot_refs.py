"""The refs that keep snapshot trees alive: `refs/di-code/<home>/<session>/<tree>`, which
`git gc` respects and no branch command shows; each DI_CODE_HOME prunes only its own.

A git killed while it wrote one (a stopped snapshot, a killed di-code) leaves the ref's
`.lock`, and git then refuses that ref for good. A session's refs are written only by the one
process that holds the session, one at a time, so a lock on one of them is always a killed
git's: it is removed and the ref written again. Pruning is housekeeping: when it fails the
snapshot goes on. The refs of deleted sessions are deleted by any run of the home, so a lock on
one may be another run's at work; one over an hour old (no git holds one that long) was left by
a killed prune, and is removed before the prune is tried again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from di_code.session.git_run import REF_PREFIX, GitError, GitStopped
from di_code.session.stat_cache import LEFT_AFTER

logger = logging.getLogger(__name__)

Git = Callable[..., bytes]
"""`GitSnapshots.git`: runs one git command (args, stdin=) in the work tree; its output."""


class SnapshotRefs:
    def __init__(
        self, git: Git, top: Path, scope: str, listed: dict[str, str] | None = None
    ) -> None:
        self.git = git
        self.top = top
        self.scope = scope
        """`<home>/` : the refs of one DI_CODE_HOME live under REF_PREFIX + scope."""
        self._listed = listed
        """Those refs (name -> object) as the git process that found the work tree listed
        them (`git_run.top_and_refs`): the first `prune` takes them instead of asking again."""
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

    def _unlocked(self, ref: str, older_than: float = 0.0) -> bool:
        """Remove the lock a killed git left on `ref` (one older than `older_than` seconds);
        whether there was one."""
        common = self.git(["rev-parse", "--git-common-dir"]).decode(errors="surrogateescape")
        lock = self.top / common.removesuffix("\n") / f"{ref}.lock"
        try:
            if time.time() - lock.lstat().st_mtime < older_than:
                return False
            lock.unlink()
        except FileNotFoundError:
            return False
        return True

    def _listing(self, scope: str) -> dict[str, str]:
        """This home's refs: ref -> the object it points at (a ref holds no space)."""
        listed = self.git(["for-each-ref", "--format=%(objectname) %(refname)", scope]).decode()
        refs: dict[str, str] = {}
        for line in listed.splitlines():
            name, _, ref = line.partition(" ")
            refs[ref] = name
        return refs

    def prune(self, live_sessions: set[str]) -> None:
        """Delete this home's refs of every session not in `live_sessions` (its file was
        deleted), so `git gc` can drop what only they kept; other homes' refs stay."""
        scope = REF_PREFIX + self.scope
        refs = self._listed if self._listed is not None else self._listing(scope)
        self._listed = None  # listed once: a later prune (a deletion's) asks git
        dead = [ref for ref in refs if ref[len(scope) :].split("/")[0] not in live_sessions]
        self.referenced = {name for ref, name in refs.items() if ref not in dead}
        self._refs = set(refs).difference(dead)
        if not dead:
            return
        deletes = "".join(f"delete {ref}\0\0" for ref in dead).encode()  # no old value
        for attempt in range(2):
            try:
                self.git(["update-ref", "--stdin", "-z"], stdin=deletes)
                return
            except GitStopped:
                raise
            except GitError as exc:
                left = [self._unlocked(ref, LEFT_AFTER) for ref in dead] if not attempt else []
                if not any(left):
                    logger.warning("undo refs of deleted sessions kept for a later run: %s", exc)
                    return
