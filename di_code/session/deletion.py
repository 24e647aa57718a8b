"""Deleting a stored session, with what only it could use: its undo data.

A session's checkpoints serve one thing, undoing its prompts, and that needs the session: once
it is gone they are dead weight (and copies of the user's files). So they go with it: the
folders named after the session file beside it (`<session>.checkpoints/`, the copies taken
outside git, and `<session>.bash-output/`), and this home's refs of it in the work tree's git
(which the next checkpoint in that repository would prune anyway), so `git gc` can drop what
only they kept. The files the session's prompts changed are the user's and stay as they are.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from di_code.session.git_run import GitError
from di_code.session.holder import lock_path
from di_code.session.snapshot_places import git_snapshots, stored_ids
from di_code.session.store import SessionStore

logger = logging.getLogger(__name__)


def delete_session(store: SessionStore, path: Path, cwd: Path) -> None:
    """Delete the session at `path` if it belongs to the folder `cwd` (raises SessionError
    when not, OSError when its file cannot be removed: then nothing else was)."""
    session = store.open(path, cwd)  # the one way in: another folder's or a held one is refused
    git = git_snapshots(session)
    try:
        os.unlink(path)
        lock_path(path).unlink(missing_ok=True)  # removed while held: see holder.hold
    finally:
        session.release()
    for beside in path.parent.glob(f"{path.stem}.*"):
        if beside.is_dir() and not beside.is_symlink():
            shutil.rmtree(beside, ignore_errors=True)
    if git is not None:
        try:
            git.refs.prune(stored_ids(store.root))
        except GitError as exc:  # pruned at the next checkpoint in that repository
            logger.warning("could not delete the undo refs of %s: %s", session.id, exc)
