"""A checkout's files as a git tree, read by the driver without ever leaving the checkout.

The driver runs outside the task's sandbox, so whatever it reads can end up in RESULTS.jsonl.
A task controls every name and link in its checkout, so:

- names go between git and di-code NUL-separated only (`ls-files -z`, `update-index -z`);
  file contents go to git as counted data (session/blob_import, the one `fast-import`
  writer), never as a path to read:
  a name ending in `\\r` or holding `\\n` is that name, not another one;
- each file is reached from the checkout's folder one component at a time, without following
  a link (O_NOFOLLOW): a symlink is a symlink (its blob is its target's text), and a tracked
  path below a folder that became a link (or a file) is gone, the link in its place;
- only regular files are read (the file opener), never a FIFO or a device.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from di_code.session.blob_import import BlobImport, blob_name, fast_import
from di_code.session.git_run import run_git
from di_code.system.files.opener import (
    FileTooLarge,
    NotRegularFile,
    open_in,
    parent_folder,
    read_at_most,
)

GITLINK = b"160000"


MAX_FILE_BYTES = 64 * 1024 * 1024
"""A file larger than this is left out of the patch (and named): a sparse 1 TiB file or one
that grows while it is read costs at most this much."""
MAX_NEW_BYTES = 1024 * 1024 * 1024
"""New file contents held at once for the patch; the files past it are left out (and named)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A path in a tree: its git mode and blob."""

    mode: bytes
    blob: str
    data: bytes | None = None
    """The bytes to write as a new blob (None: git has it already)."""


@dataclass(frozen=True, slots=True)
class CheckoutTree:
    tree: str
    left_out: tuple[str, ...] = ()
    """`NAME: why` for each file the tree shows as it was in the base (or not at all), not as
    it is: too large, not readable, or past the bytes a patch may hold."""


def checkout_tree(top: Path, base: dict[bytes, Entry] | None = None) -> CheckoutTree:
    """The tree of every file in the checkout `top` that git tracks or does not ignore, each as
    its raw bytes (a symlink as its target's text; submodules as they are in the index);
    `base` (the entries of the tree it started from) is what a left-out file stays."""
    base = base or {}
    known = {entry.blob for entry in base.values()}
    algorithm = run_git(top, ["rev-parse", "--show-object-format"]).decode().strip()
    entries: dict[bytes, Entry] = {}
    left_out: list[str] = []
    room = MAX_NEW_BYTES
    for name, entry in _candidates(top).items():
        try:
            found = entry or _entry(top, name, algorithm)
        except FileTooLarge as exc:
            found, why = None, f"{exc.size:,} bytes, over the {MAX_FILE_BYTES:,} of one file"
        except PermissionError:
            found, why = None, "not readable"
        else:
            if found is None:
                continue  # not there as a file or a link
            if found.data is not None and found.blob in known:
                found = Entry(found.mode, found.blob)  # git has it: the bytes are not kept
            size = len(found.data or b"")
            if size <= room:
                room -= size
                entries[name] = found
                continue
            why = f"past the {MAX_NEW_BYTES:,} bytes of new files a patch holds"
        left_out.append(f"{name.decode(errors='backslashreplace')}: {why}")
        if name in base:
            entries[name] = base[name]
    _write_blobs(top, {e.blob: e.data for e in entries.values() if e.data is not None}, algorithm)
    return CheckoutTree(_write_tree(top, entries), tuple(left_out))


def tree_entries(top: Path, tree: str) -> dict[bytes, Entry]:
    """Every path of `tree` with its mode and blob (`ls-tree -z`: NUL-separated names)."""
    entries: dict[bytes, Entry] = {}
    for row in _split(run_git(top, ["ls-tree", "-r", "-z", "--full-tree", tree])):
        meta, name = row.split(b"\t", 1)
        mode, _, blob = meta.split(b" ", 2)
        entries[name] = Entry(mode, blob.decode())
    return entries


def _candidates(top: Path) -> dict[bytes, Entry | None]:
    """Every name that may be in the tree: tracked (a submodule with its index entry), and
    untracked and not ignored (a nested repository, listed as `name/`, left out)."""
    names: dict[bytes, Entry | None] = {}
    for row in _split(run_git(top, ["ls-files", "-z", "-s"])):
        meta, name = row.split(b"\t", 1)
        mode, blob, _ = meta.split(b" ", 2)
        names[name] = Entry(mode, blob.decode()) if mode == GITLINK else None
        parts = name.split(b"/")
        for depth in range(1, len(parts)):  # a tracked folder may have become a link or a file
            names.setdefault(b"/".join(parts[:depth]), None)
    untracked = run_git(top, ["ls-files", "-z", "-o", "--exclude-standard"])
    names.update((name, None) for name in _split(untracked) if not name.endswith(b"/"))
    return names


def _entry(top: Path, name: bytes, algorithm: str) -> Entry | None:
    """The file or link `name` in the checkout `top`, None when it is not there as one (gone,
    a folder, a special file, or below something that is not a real folder)."""
    path = top / os.fsdecode(name)
    try:
        with parent_folder(path) as folder:  # every component opened without following
            info = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(os.fsencode(path.name), dir_fd=folder)
                return _blob(b"120000", target, algorithm)
            if not stat.S_ISREG(info.st_mode):
                return None  # a FIFO, socket or device: never opened
            with open_in(folder, path.name) as handle:
                executable = os.fstat(handle.fileno()).st_mode & 0o111
                data = read_at_most(handle, MAX_FILE_BYTES)
                return _blob(b"100755" if executable else b"100644", data, algorithm)
    except (NotRegularFile, IsADirectoryError, FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a folder on the way is a link: nothing below it counts
            return None
        raise


def _blob(mode: bytes, data: bytes, algorithm: str) -> Entry:
    """An entry whose blob id is computed as git does (its object header, then the bytes)."""
    return Entry(mode, blob_name(algorithm, data), data)


def _write_blobs(top: Path, blobs: dict[str, bytes], algorithm: str) -> None:
    """Each blob written into the checkout's repository by one `fast-import` (session's
    BlobImport: counted data, no name, no file path)."""
    with BlobImport() as stream:
        for data in blobs.values():
            stream.add_bytes(data, algorithm)
        stream.write(functools.partial(fast_import, top), set(blobs))


def _write_tree(top: Path, entries: dict[bytes, Entry]) -> str:
    rows = b"".join(b"%s %s\t%s\0" % (e.mode, e.blob.encode(), n) for n, e in entries.items())
    with tempfile.TemporaryDirectory(prefix="di-code-index-") as folder:
        index = str(Path(folder, "index"))
        run_git(top, ["update-index", "-z", "--index-info"], index_file=index, stdin=rows)
        return run_git(top, ["write-tree"], index_file=index).decode().strip()


def _split(output: bytes) -> list[bytes]:
    return [part for part in output.split(b"\0") if part]
