"""The files of a git work tree as di-code reads them for a snapshot: by itself, through the
file opener, and handed to git as bytes, never as names.

`git hash-object --stdin-paths` takes one name a line (a name with `\\n` is two names, a
trailing `\\r` is dropped, so `k\\r` was hashed as `k`) and opens each file itself: through a
link swapped in after di-code looked (a private key outside the workspace went into the
repository's objects), and blocking for ever on a FIFO. Here each folder of the tree is opened
once, relative to the one above it, without following a link; a path with a link or a
non-folder on the way is taken as absent. A file is opened through the opener (a FIFO or a
device is refused, never waited on), read to one byte past the size it had (a file that
changes meanwhile is not captured), named (the blob's hash) as it is read, and only the blobs
the repository lacks are written (session/blob_import: the one fast-import writer); a symlink's
blob is its target, read with `readlink`.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, Protocol

from di_code.session.blob_import import BlobImport, TreeEdit, blob_name
from di_code.session.git_run import GitError
from di_code.system.files.opener import CHUNK, FileTooLarge, folder_in, open_in, parent_folder


class Objects(Protocol):
    """The repository's object store, as far as writing blobs needs it."""

    @property
    def object_format(self) -> str:
        """`sha1` or `sha256`: how a blob's name is computed from its bytes."""
        ...

    def missing(self, names: list[str]) -> set[str]:
        """Those of `names` the repository does not hold."""
        ...

    def fast_import(self, stream: BinaryIO) -> bytes:
        """`git fast-import` of `stream`; its output."""
        ...

    def check_stopped(self) -> None:
        """Raise (GitStopped) once the work writing blobs was stopped: a stop does not wait
        for the rest of the files to be read."""
        ...


LOOSE = 100
"""Up to this many blobs (the `fastimport.unpackLimit` di-code's git takes, git's default,
whatever the repository says: `git_run.PACK_WRITER`) go to git without asking which it lacks:
fast-import writes none a pack holds and hands the rest to `git unpack-objects`, which writes
none the repository holds, so asking first (`cat-file`) would only add a process to a
snapshot in which a few files changed."""

Blob = tuple[str, str]
"""A path whose bytes become a blob, and its mode as git writes it in a tree (LINK: a symlink,
whose blob is its target; else a regular file)."""
LINK = "120000"


class WorkTree:
    """The folders of the work tree at `top`, each opened once and kept until `close`."""

    def __init__(self, top: Path) -> None:
        """`top` is the user's folder (a link on the way to it is theirs, and followed);
        below it nothing is."""
        with parent_folder(Path(os.path.realpath(top), "x")) as folder:
            self._folders: dict[str, int | None] = {"": os.dup(folder)}

    def __enter__(self) -> WorkTree:
        return self

    def __exit__(self, *_: object) -> None:
        for fd in self._folders.values():
            if fd is not None:
                os.close(fd)
        self._folders.clear()

    def status(self, path: str) -> os.stat_result | None:
        """The status of `path` itself (a link not followed); None when it is absent or a
        component on the way is not a real folder."""
        folder, name = self._parent(path)
        if folder is None:
            return None
        try:
            return os.stat(name, dir_fd=folder, follow_symlinks=False)
        except OSError:
            return None

    def statuses(self, paths: Iterable[str]) -> Iterator[tuple[str, os.stat_result]]:
        """`status` of each of `paths` (sorted, so a folder's files come together) that is
        there; run once per file of the tree, so each folder is looked up once in a row."""
        last, folder = "", self._folders[""]
        for path in paths:
            above, _, name = path.rpartition("/")
            if above != last:
                last, folder = above, self._folder(above)
            if folder is None:
                continue
            try:
                yield path, os.stat(name, dir_fd=folder, follow_symlinks=False)
            except OSError:
                continue

    def write_blobs(
        self, blobs: Iterable[Blob], limit: int, store: Objects, edit: TreeEdit | None = None
    ) -> list[str | None]:
        """Each blob's name in the repository, in order: None for a path that could not be
        read as it was seen (gone, swapped for a folder or a FIFO, changed while read, grown
        past `limit`). Names are computed here; only blobs the repository lacks are written
        (an unchanged file costs no disk, which may be full). With `edit`, the same git makes
        its tree with each blob read put in at its path."""
        found: list[str | None] = []
        with BlobImport() as stream:
            for path, mode in blobs:
                store.check_stopped()
                copy = functools.partial(
                    self._copy, path, mode, limit=limit, form=store.object_format
                )
                try:
                    name = stream.add(copy)
                except OSError:
                    found.append(None)
                    continue
                found.append(name)
                if edit is not None:
                    edit.put(mode, name, path.encode(errors="surrogateescape"))
            # with an edit, only the blobs put in: the others are its tree's, which git holds
            names = [b for _, b, _ in edit.puts] if edit is not None else [n for n in found if n]
            if len(names) <= LOOSE:
                try:
                    stream.write(store.fast_import, set(names), edit)
                    return found
                except GitError:  # its temporary pack needs room, even when it holds nothing
                    pass  # (a full disk): asked, git is given only what it lacks, if any
            stream.write(store.fast_import, store.missing(names), edit)
        return found

    def _copy(self, path: str, mode: str, stream: BinaryIO, *, limit: int, form: str) -> str:
        """Write `<size>\\n<bytes>` of one path; its object name (`form`: sha1 or sha256)."""
        folder, name = self._parent(path)
        if folder is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        if mode == LINK:
            target = os.fsencode(os.readlink(name, dir_fd=folder))
            stream.write(b"%d\n" % len(target) + target)
            return blob_name(form, target)
        with open_in(folder, name) as f:
            fd = f.fileno()
            size = os.fstat(fd).st_size
            if size > limit:
                raise FileTooLarge(size, limit)
            digest = hashlib.new(form, b"blob %d\0" % size)
            stream.write(b"%d\n" % size)
            taken = 0
            while True:  # one byte past the size: a file that grew is seen
                wanted = min(CHUNK, size - taken + 1)
                chunk = os.read(fd, wanted)
                taken += len(chunk)
                if taken > size:
                    break
                digest.update(chunk)
                stream.write(chunk)
                if len(chunk) < wanted:  # a regular file's short read: its end
                    break
        if taken != size:  # it changed while read: not the file its status showed
            raise OSError(errno.EAGAIN, "changed while read", path)
        return digest.hexdigest()

    def _parent(self, path: str) -> tuple[int | None, str]:
        folder, _, name = path.rpartition("/")
        return self._folder(folder), name

    def _folder(self, path: str) -> int | None:
        """The open folder `path` (relative to the top), None when it is not a real one."""
        if path in self._folders:
            return self._folders[path]
        above, _, name = path.rpartition("/")
        parent = self._folder(above)
        fd = None
        if parent is not None:
            with contextlib.suppress(OSError):
                fd = folder_in(parent, name)
        self._folders[path] = fd
        return fd
