"""A fork: a new session that starts with an earlier session's conversation, up to a point
(`/fork [N]`, `--fork`, an editor's `session/fork`). The original is left as it was, file and
branches; the fork is a file of its own, with its own id, that goes on from there.

What is copied is the conversation: the messages, model changes and compactions of the branch
up to that point (ids kept, each entry following the one before). The checkpoints are not
(nor `/tree`'s branch marks): they record what the original's prompts did to the files, and
undo in the fork starts afresh (undo of those prompts stays in the original).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from di_code.session.format import BranchEntry, CheckpointEntry

if TYPE_CHECKING:
    from di_code.session.session import Session
    from di_code.session.store import SessionStore


def fork(
    store: SessionStore,
    source: Session,
    cwd: Path,
    leaf_id: str | None,
    origin: str | None = None,
) -> Session:
    """A new session of `cwd` holding `source`'s conversation up to the entry `leaf_id`
    (None: an empty conversation), saved at once."""
    entries = [
        e for e in source.branch_to(leaf_id) if not isinstance(e, CheckpointEntry | BranchEntry)
    ]
    forked = store.create(cwd, origin or source.header.origin)
    forked.append_copies(entries)
    return forked
