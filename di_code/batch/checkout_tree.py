"""A checkout's files as a git tree, read by the driver without ever leaving the checkout.

The driver runs outside the task's sandbox, so whatever it reads can end up in RESULTS.jsonl.
A task controls every name and link in its checkout, so:

- names go between git and di-code NUL-separated only (`ls-files -z`, `update-index -z`);
  file contents go to git as counted data (`fast-import`'s `data N`), never as a path to read:
  a name ending in `\\r` or holding `\\n` is that name, not another one;
- each file is reached from the checkout's folder one component at a time, without following
  a link (O_NOFOLLOW): a symlink is a symlink (its blob is its target's text), and a tracked
  path below a folder that became a link (or a file) is gone, the link in its place;
- only regular files are read (the file door), never a FIFO or a device.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from di_code.ai.files.door import NotRegularFile, open_in, parent_folder
from di_code.session.git_run import run_git

GITLINK = b"160000"


@dataclass(frozen=True, slots=True)
class _Entry:
    mode: bytes
    blob: str
    data: bytes | None = None
    """The bytes to write as a new blob (None: git has it already)."""


def checkout_tree(top: Path, known: frozenset[str] = frozenset()) -> str:
    """The tree of every file in the checkout `top` that git tracks or does not ignore, each as
    its raw bytes (a symlink as its target's text; submodules as they are in the index);
    `known` blobs (the base's) are not written again."""
    algorithm = run_git(top, ["rev-parse", "--show-object-format"]).decode().strip()
    entries: dict[bytes, _Entry] = {}
    for name, entry in _candidates(top).items():
        found = entry or _entry(top, name, algorithm)
        if found is not None:  # the bytes are kept only when git does not have them yet
            entries[name] = _Entry(found.mode, found.blob) if found.blob in known else found
    _write_blobs(top, {e.blob: e.data for e in entries.values() if e.data is not None})
    return _write_tree(top, entries)


def tree_blobs(top: Path, tree: str) -> frozenset[str]:
    """Every blob of `tree` (`ls-tree -z`: names are not parsed, only the objects)."""
    listing = run_git(top, ["ls-tree", "-r", "-z", "--full-tree", tree])
    return frozenset(row.split(b"\t", 1)[0].split()[2].decode() for row in _split(listing))


def _candidates(top: Path) -> dict[bytes, _Entry | None]:
    """Every name that may be in the tree: tracked (a submodule with its index entry), and
    untracked and not ignored (a nested repository, listed as `name/`, left out)."""
    names: dict[bytes, _Entry | None] = {}
    for row in _split(run_git(top, ["ls-files", "-z", "-s"])):
        meta, name = row.split(b"\t", 1)
        mode, blob, _ = meta.split(b" ", 2)
        names[name] = _Entry(mode, blob.decode()) if mode == GITLINK else None
        for cut in range(len(name)):  # a tracked folder may have become a link or a file
            if name[cut : cut + 1] == b"/":
                names.setdefault(name[:cut], None)
    untracked = run_git(top, ["ls-files", "-z", "-o", "--exclude-standard"])
    names.update((name, None) for name in _split(untracked) if not name.endswith(b"/"))
    return names


def _entry(top: Path, name: bytes, algorithm: str) -> _Entry | None:
    """The file or link `name` in the checkout `top`, None when it is not there as one (gone,
    a folder, a special file, or below something that is not a real folder)."""
    path = top / os.fsdecode(name)
    try:
        with parent_folder(path) as folder:  # every component opened without following
            info = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(os.fsencode(path.name), dir_fd=folder)
                return _blob(b"120000", target, algorithm)
            with open_in(folder, path.name) as handle:
                executable = os.fstat(handle.fileno()).st_mode & 0o111
                return _blob(b"100755" if executable else b"100644", handle.read(), algorithm)
    except (NotRegularFile, IsADirectoryError, FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a folder on the way is a link: nothing below it counts
            return None
        raise


def _blob(mode: bytes, data: bytes, algorithm: str) -> _Entry:
    """An entry whose blob id is computed as git does (its object header, then the bytes)."""
    blob = hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest()
    return _Entry(mode, blob, data)


def _write_blobs(top: Path, blobs: dict[str, bytes]) -> None:
    """Each blob written into the checkout's repository by one `fast-import`: counted data,
    no name, no file path."""
    if blobs:
        stream = b"".join(b"blob\ndata %d\n%s\n" % (len(data), data) for data in blobs.values())
        run_git(top, ["fast-import", "--quiet", "--done"], stdin=stream + b"done\n")


def _write_tree(top: Path, entries: dict[bytes, _Entry]) -> str:
    rows = b"".join(b"%s %s\t%s\0" % (e.mode, e.blob.encode(), n) for n, e in entries.items())
    with tempfile.TemporaryDirectory(prefix="di-code-index-") as folder:
        index = str(Path(folder, "index"))
        run_git(top, ["update-index", "-z", "--index-info"], index_file=index, stdin=rows)
        return run_git(top, ["write-tree"], index_file=index).decode().strip()


def _split(output: bytes) -> list[bytes]:
    return [part for part in output.split(b"\0") if part]
