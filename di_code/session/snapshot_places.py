"""Where one session's checkpoints live: the git snapshots of the work tree its folder is in
(their refs apart per DI_CODE_HOME, their stat cache per work tree), the originals of files
outside git beside the session file, and which sessions the store still holds (the refs of
the others are pruned). Shared by the checkpoints, undo and session deletion."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from di_code.session.git_run import REF_PREFIX, Top, top_and_refs
from di_code.session.session import Session

if TYPE_CHECKING:
    from di_code.session.git_snapshot import GitSnapshots

FindTop = Callable[[Path, str], Top | None]
"""Where a folder's work tree is (None: outside git), with the refs under a prefix
(`git_run.top_and_refs`: one git process for both)."""


def backup_folder(session: Session, ref: str) -> Path:
    """Where the originals of one prompt are kept (outside git), beside the session file."""
    return session.path.parent.resolve() / f"{session.path.stem}.checkpoints" / ref


def ref_scope(session: Session) -> str:
    """The refs of one DI_CODE_HOME (its session store) live apart from another's, so one
    never prunes the refs the other's undo needs."""
    store = str(session.path.parent.parent.resolve())
    return hashlib.sha256(store.encode(errors="surrogateescape")).hexdigest()[:12] + "/"


def refs_prefix(session: Session) -> str:
    """The refs of the session's home: its snapshots' trees are kept under it."""
    return REF_PREFIX + ref_scope(session)


def git_snapshots(
    session: Session,
    max_file_bytes: int | None = None,
    stopped: Callable[[], bool] | None = None,
    find_top: FindTop = top_and_refs,
) -> GitSnapshots | None:
    """Snapshots of the git work tree the session's folder is in (ended once `stopped()`
    says so); None outside git. `max_file_bytes`: None for the snapshots' own limit
    (git_snapshot.DEFAULT_MAX_FILE_BYTES)."""
    found = find_top(Path(session.cwd), refs_prefix(session))
    if found is None:
        return None
    top = found.path
    from di_code.session.git_snapshot import DEFAULT_MAX_FILE_BYTES, GitSnapshots
    from di_code.session.stat_cache import StatCache

    max_file_bytes = DEFAULT_MAX_FILE_BYTES if max_file_bytes is None else max_file_bytes
    key = hashlib.sha256(str(top).encode(errors="surrogateescape")).hexdigest()[:16]
    home = session.path.parent.parent.parent.resolve()
    cache = StatCache(home / "snapshot-cache" / f"{key}.json")
    return GitSnapshots(
        top,
        max_file_bytes=max_file_bytes,
        ref_scope=ref_scope(session),
        refs_listed=found.refs,
        stat_cache=cache,
        stopped=stopped,
    )


def stored_ids(store: Path) -> set[str]:
    """The ids of every session file in the store (file names end in `_<id>.jsonl`)."""
    return {path.stem.rpartition("_")[2] for path in store.glob("*/*.jsonl")}
