"""What a snapshot sees of the paths it lists that its private index has no up-to-date entry
for: each one's status, and for each file or symlink under the size limit, the blob of its raw
bytes (`WorkTree`), entered in the index with the stat data seen before the read."""

from __future__ import annotations

import os
import time
from pathlib import Path
from stat import S_ISLNK, S_ISREG

from di_code.session import index_file
from di_code.session.blob_import import TreeEdit
from di_code.session.stat_cache import Fingerprint, Outside
from di_code.session.work_tree import LINK, Objects, WorkTree

LARGE = "large"
UNREAD = "unread"
"""Why a listed path is not in a snapshot's tree (`Outside`); "" when it is not a file."""


def look(
    top: Path,
    paths: list[str],
    limit: int,
    store: Objects,
    entries: list[index_file.Entry] | None = None,
    edit: TreeEdit | None = None,
) -> Outside:
    """Of `paths`, those a tree cannot hold: not a file or link now (None), over `limit` bytes
    (LARGE) or unread (UNREAD, changed while read), with their stat data. With `entries`, the
    rest are hashed (only the blobs the repository lacks are written) and added to it, and
    put in `edit`'s tree if given; without, they are only named, with their stat data (a file
    is not read to find nothing changed)."""
    outside: Outside = {}
    to_hash: list[tuple[str, os.stat_result, str]] = []
    with WorkTree(top) as tree:
        statuses = dict(tree.statuses(paths))
        seen_ns = time.time_ns()
        for path in paths:
            info = statuses.get(path)
            mode = git_mode(info.st_mode) if info is not None else ""
            if info is None or not mode:
                outside[path] = ("", None)  # gone, or a folder or device where a file was
            elif info.st_size > limit and mode != LINK:
                outside[path] = (LARGE, fingerprint(info))
            else:
                to_hash.append((path, info, mode))
        if entries is None:
            return outside | {path: ("", fingerprint(info)) for path, info, _ in to_hash}
        blobs = tree.write_blobs(((p, mode) for p, _, mode in to_hash), limit, store, edit)
    for (path, info, mode), blob in zip(to_hash, blobs, strict=True):
        if blob is None:
            outside[path] = (UNREAD, fingerprint(info))
        else:
            raw = path.encode(errors="surrogateescape")
            entries.append(index_file.entry(raw, info, mode, blob, seen_ns))
    return outside


def fingerprint(info: os.stat_result) -> Fingerprint:
    return (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def git_mode(mode: int) -> str:
    """A file's or symlink's mode as git writes it in a tree; "" for anything else."""
    if S_ISREG(mode):
        return "100755" if mode & 0o111 else "100644"
    return LINK if S_ISLNK(mode) else ""
