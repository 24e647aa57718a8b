"""Snapshots of a git work tree that never touch the user's index, HEAD, branches or stash.

A snapshot is a git tree object of the working tree as it is (tracked files and untracked files
that are not ignored). Every blob is the file's raw bytes, read by di-code through the file
opener and handed to git as bytes (`work_tree`), so no filter or eol conversion runs, no link is
followed and a restore is byte-exact; a symlink's blob is its target. The
tree is written from a private index that di-code keeps for the work tree (`stat_cache`), with
each file's blob and the stat data it had, so git itself tells which files changed since the last
snapshot (`git diff-files`, in C) and only those are read; a snapshot of an unchanged tree reads
no file and writes no object, and one in which a few files changed has git put them in the last
tree as it writes their blobs (`blob_import.TreeEdit`). The tree is kept alive by a ref
(`snapshot_refs`).

What a snapshot cannot capture is named in `skipped` with the reason (files over the size
limit, submodules, every untracked file when there are too many, a file swapped while it was
read): undo treats those paths as unknown and never deletes or overwrites them.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO

import msgspec

from di_code.session import index_file
from di_code.session.blob_import import Indexed, TreeEdit, fast_import
from di_code.session.git_run import Blocked, GitError, GitStopped, run_git
from di_code.session.snapshot_refs import SnapshotRefs
from di_code.session.stat_cache import Fingerprint, Outside, StatCache
from di_code.session.work_tree import WorkTree
from di_code.session.work_tree_look import LARGE, UNREAD, fingerprint, look

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_UNTRACKED_FILES = 5_000
"""More untracked files than this (a repository at $HOME without a .gitignore) are not
captured: hashing them all would fill the repository with copies of unrelated files."""
MAX_WATCHED = 5_000
"""Ignored entries whose stat data is compared around each tool call (beyond: not watched)."""
SUBMODULE = "submodule, not captured"
NESTED = "a nested repository, not covered by undo"
"""An untracked folder with a repository of its own: git lists it, never its files."""
NEVER_COVERED = (SUBMODULE, NESTED)
"""Paths whose changes no snapshot sees: named in every plan of a prompt that had them."""
CHANGED_BY_TOOL = "changed by a tool"
"""In a `skipped` reason: a tool call changed this uncaptured path (its bytes are lost)."""
IGNORED_CHANGED = f"ignored by git, {CHANGED_BY_TOOL}, not captured"
IGNORED_NOW = "ignored by git now, not captured"
"""A path (or a folder of them) git ignores in this snapshot: one missing from the tree under
it may be there all along (a rule changed), so it is unknown, not absent."""
UNKNOWN_BEFORE = "ignored by git before a tool ran, so not known to be the tool's"
"""In a tool-after's `skipped`: this path appeared, but was it made? Before the call an
ignore rule hid it (the call may have changed the rule): its state then is unknown."""
CHANGED_WHILE_READ = "unreadable, or changed while read, not captured"
"""A path that could not be read (no permission), or was swapped (for a FIFO, a folder, a link
on the way) or changed between its status and its read."""


class Snapshot(msgspec.Struct, frozen=True):
    tree: str
    skipped: tuple[str, ...] = ()
    """`skip()` entries: what this tree does not show as it really is."""
    watched: dict[str, Fingerprint] = msgspec.field(default_factory=dict)
    """Stat data of skipped and ignored paths (kept in memory only): a change around one
    tool call is then named, though its bytes were not captured."""
    ignored: frozenset[str] | None = frozenset()
    """Every ignored path (a wholly ignored folder as one; in memory only); None when git
    could not list them."""
    files: frozenset[str] = frozenset()
    """The paths in `tree` (kept in memory only)."""

    def absent(self, path: str) -> bool:
        """Whether `path` was provably not there: not in the tree, and neither it nor a
        folder above it ignored (git shows no ignored path, so a new rule may bring one
        into view that was there all along)."""
        return (path not in self.files and self.ignored is not None and not self.hiding(path)
                and not self.uncovering(path))  # fmt: skip

    def uncovering(self, path: str) -> str:
        """The submodule or nested repository (`path` or a folder above it) whose files no
        snapshot lists, or "": a file of one that comes into view (a tool removed its `.git`)
        was there all along, not made."""
        covered = {p for reason, p in map(parse_skip, self.skipped) if reason in NEVER_COVERED}
        return next((p for p in _prefixes(path) if p in covered), "")

    def hiding(self, path: str) -> str:
        """The ignored path (`path` or a folder above it) that hides `path`, or ""."""
        return next((p for p in _prefixes(path) if p in (self.ignored or ())), "")


class Change(msgspec.Struct, frozen=True):
    """One path that differs between two snapshots: modes and blobs None when absent."""

    path: str
    old_mode: str | None
    new_mode: str | None
    old_blob: str | None = None
    new_blob: str | None = None


def skip(reason: str, path: str = "") -> str:
    """One `skipped` entry; path "" stands for every untracked path (none were captured)."""
    return f"{reason}\t{path}"


def parse_skip(entry: str) -> tuple[str, str]:
    """(reason, path) of a `skipped` entry (an old entry is a bare path)."""
    reason, tab, path = entry.partition("\t")
    return (reason, path) if tab else ("not captured", entry)


def too_large(max_file_bytes: int) -> str:
    return f"larger than {max_file_bytes / (1024 * 1024):g} MB, not captured"


class GitSnapshots:
    def __init__(
        self,
        top: Path,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_untracked_files: int = MAX_UNTRACKED_FILES,
        ref_scope: str = "",
        refs_listed: dict[str, str] | None = None,
        stat_cache: StatCache | None = None,
        stopped: Callable[[], bool] | None = None,
    ) -> None:
        self.top = top
        self.stopped = stopped
        """Once it says so, the running git is killed and the snapshot raises GitStopped: what
        the killed git leaves (a staged private index, a ref's lock, objects) costs time only."""
        self.max_file_bytes = max_file_bytes
        self.max_untracked_files = max_untracked_files
        """Limits for undo; a batch task's patch (batch.checkout) takes every file."""
        self.stat_cache = stat_cache or StatCache()
        self.refs = SnapshotRefs(self.git, top, ref_scope, refs_listed)
        """`refs_listed`: the scope's refs, when the caller listed them (`SnapshotRefs`)."""

    def git(self, args: list[str], *, index_file: str | None = None, stdin: bytes = b"") -> bytes:
        return run_git(self.top, args, index_file=index_file, stdin=stdin, stopped=self.stopped)

    def take(self, *, ignored: bool = True) -> Snapshot:
        """The work tree as it is now. Without `ignored`, the ignored paths are not listed
        (`Snapshot.ignored` is None, so no path is taken as absent) and not watched: a prompt's
        first snapshot, whose tree alone is recorded, spares that second walk of the tree."""
        with ThreadPoolExecutor(1) as pool:  # git compares the stat data while it lists
            stat_changed = pool.submit(self._stat_changed)
            tracked, untracked, skipped = self._listed()
            changed = stat_changed.result()
        if len(untracked) > self.max_untracked_files:
            count = f"{len(untracked):,} untracked files (over {self.max_untracked_files:,})"
            skipped.append(skip(f"{count}, none captured"))
            untracked = []
        paths = tracked + untracked  # two sorted lists, no path in both: sorting merges them
        paths.sort()
        try:
            tree, outside = self._captured(paths, changed)
        except GitStopped:
            raise
        except GitError:  # a blob the index names may have been pruned: hash everything again
            self.stat_cache.clear()
            self.__dict__.pop("object_format", None)  # asked of git again
            tree, outside = self._captured(paths, None)
        large = {p: fp for p, (why, fp) in outside.items() if why == LARGE and fp is not None}
        skipped += [skip(too_large(self.max_file_bytes), path) for path in large]
        unread = [path for path, (why, _) in outside.items() if why == UNREAD]
        skipped += [skip(CHANGED_WHILE_READ, path) for path in unread]
        listed, watched = self._ignored() if ignored else (None, {})
        files = frozenset(paths).difference(outside)
        return Snapshot(tree, tuple(skipped), {**large, **watched}, listed, files)

    def _listed(self) -> tuple[list[str], list[str], list[str]]:
        """Tracked paths, untracked ones that are not ignored, and the `skipped` entries of
        what neither covers (submodules, nested repositories): one `ls-files` reads the index
        and walks the tree for both lists, each row tagged (`H`, `S`, `M`: the index; `?`:
        untracked)."""
        try:
            rows = self._paths(["ls-files", "-z", "-t", "-s", "-o", "--exclude-standard"])
        except Blocked as exc:  # a FIFO among the ignore files: no untracked file is known
            rows = [f"H {row}" for row in self._paths(["ls-files", "-z", "-s"])]
            failed = [skip(f"{exc}, none captured")]
        else:
            failed = []
        # run once per file of the tree, so in comprehensions: an index row is `<tag> <mode>
        # <blob> <stage>\t<path>`, its path at the same place in every row
        indexed = [row for row in rows if row[0] != "?"]
        cut = indexed[0].index("\t") + 1 if indexed else 0
        tracked = [row[cut:] for row in indexed if row[2:8] != "160000"]
        submodules = [row[cut:] for row in indexed if row[2:8] == "160000"]
        others = [row[2:] for row in rows if row[0] == "?"]
        untracked = [path for path in others if path[-1] != "/"]
        nested = [path for path in others if path[-1] == "/"]
        skipped = [skip(SUBMODULE, path) for path in dict.fromkeys(submodules)]
        skipped += failed + [skip(NESTED, path.rstrip("/")) for path in nested]
        return list(dict.fromkeys(tracked)), untracked, skipped

    def _stat_changed(self) -> Indexed | None:
        """The paths of the private index whose stat data differs from the work tree's (or
        that are gone), as `git diff-files` compares them, each with its entry's mode and
        blob; None without an index git reads (then every file is hashed and the index made
        again)."""
        if not self.stat_cache.comparing():
            return None
        args = ["diff-files", "-z", "--no-textconv", "--no-ext-diff"]
        try:
            out = self.git(args, index_file=str(self.stat_cache.index))
        except GitError:  # stopped: the listing beside it is, and says so
            return None
        fields = out.split(b"\0")  # `:<old mode> <new mode> <old blob> <new blob> <how>`, path
        return {
            path: (meta[1:7].decode(), meta[15:].partition(b" ")[0].decode())
            for meta, path in zip(fields[0::2], fields[1::2], strict=False)
            if path
        }

    def _captured(self, paths: list[str], changed: Indexed | None) -> tuple[str, Outside]:
        """The tree of `paths` as they are, and those of them it does not hold (too large,
        unread, not a file): the last snapshot's when git saw no file change and every path
        it did not hold is as it was, else one the private index is brought up to date for."""
        listing = _listing(paths, self.max_file_bytes)
        known = self.stat_cache.known(listing) if changed is not None else None
        if known is not None:
            tree, outside = known
            same_outside = look(self.top, list(outside), self.max_file_bytes, self) == outside
            if same_outside and self._holds(tree):
                if not changed:
                    return tree, outside
                patched = self._patched(tree, paths, listing, changed, outside)
                if patched is not None:
                    return patched, outside
        return self._updated(paths, listing, changed)

    def _patched(
        self, tree: str, paths: list[str], listing: str, changed: Indexed, outside: Outside
    ) -> str | None:
        """The last snapshot's `tree`, of the same paths (`outside` as they were), with the
        files that changed put in: only their entries are made again in the private index, in
        place, and git makes the tree in the process that writes their blobs (`TreeEdit`);
        None when one of them is no longer a file the tree holds."""
        looked = sorted(path.decode(errors="surrogateescape") for path in changed)
        new: list[index_file.Entry] = []
        edit = TreeEdit(tree, changed)
        if look(self.top, looked, self.max_file_bytes, self, new, edit):
            return None
        held = [path for path in paths if path not in outside] if outside else paths
        if not self.stat_cache.patch(_git_names(held), new, self.object_format):
            return None
        self.stat_cache.remember(listing, edit.tree, self.object_format, outside)
        return edit.tree

    def _updated(
        self, paths: list[str], listing: str, changed: Indexed | None
    ) -> tuple[str, Outside]:
        """Bring the private index to `paths`: an entry git saw no change in is kept, every
        other path is looked at and hashed (`look`); then its tree. Without git's comparison
        (`changed` None: it failed, or there was no index) no entry is known to match."""
        form = self.object_format
        old = self.stat_cache.entries(form) if changed is not None else {}
        entries: list[index_file.Entry] = []
        looked: list[str] = []
        for path in paths:
            raw = path.encode(errors="surrogateescape")
            fixed = old.get(raw)
            if fixed is None or raw in (changed or ()):
                looked.append(path)
            else:
                entries.append((raw, fixed))
        outside = look(self.top, looked, self.max_file_bytes, self, entries)
        entries.sort()
        self.stat_cache.write(entries, form)
        return self._written(listing, outside), outside

    def _written(self, listing: str, outside: Outside) -> str:
        """The tree of the staged private index, which then replaces it, remembered for
        `listing`."""
        tree = self.git(["write-tree"], index_file=str(self.stat_cache.staged)).decode().strip()
        self.stat_cache.remember(listing, tree, self.object_format, outside)
        return tree

    def _holds(self, tree: str) -> bool:
        """Whether the repository holds `tree` (a ref of this home points at it, or git has it)."""
        return tree in self.refs.referenced or self._is_tree(tree)

    @functools.cached_property
    def object_format(self) -> str:
        """How the repository names objects: `sha1` or `sha256` (as the private index of the
        last snapshot says: a blob of the other kind makes `write-tree` fail, and then the
        snapshot starts over, asking git)."""
        named = self.stat_cache.object_format() or ""
        named = named or self.git(["rev-parse", "--show-object-format"]).decode().strip()
        return "sha256" if named == "sha256" else "sha1"

    def missing(self, names: list[str]) -> set[str]:
        if not names:
            return set()
        asked = "".join(f"{name}\n" for name in names).encode()
        rows = self.git(["cat-file", "--batch-check"], stdin=asked).decode().splitlines()
        return {row.split()[0] for row in rows if row.endswith(" missing")}

    def fast_import(self, stream: BinaryIO) -> bytes:
        return fast_import(self.top, stream, self.stopped)

    def check_stopped(self) -> None:
        if self.stopped is not None and self.stopped():
            raise GitStopped("the snapshot was stopped")

    def _is_tree(self, name: str) -> bool:
        try:
            return self.git(["cat-file", "-t", name]) == b"tree\n"
        except GitError:  # pruned since (or stopped: the next git, or blob, says so)
            return False

    def changes(self, old_tree: str, new_tree: str) -> list[Change]:
        """Every file path that differs between two trees (no rename detection)."""
        if old_tree == new_tree:
            return []
        args = ["diff-tree", "-r", "-z", "--no-renames", "--no-textconv", "--no-ext-diff"]
        fields = self.git([*args, old_tree, new_tree]).decode(errors="surrogateescape").split("\0")
        changes: list[Change] = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            if not meta.startswith(":"):
                continue
            old_mode, new_mode, old_blob, new_blob = meta[1:].split(" ", 4)[:4]
            old, new = _absent(old_mode), _absent(new_mode)
            changes.append(Change(path, old, new, old and old_blob, new and new_blob))
        return changes

    def blobs(self, names: Iterable[str]) -> dict[str, bytes]:
        """The raw bytes of each blob, read in one `cat-file --batch`."""
        wanted = sorted(set(names))
        if not wanted:
            return {}
        out = self.git(["cat-file", "--batch"], stdin="".join(f"{n}\n" for n in wanted).encode())
        found: dict[str, bytes] = {}
        at = 0
        for name in wanted:
            header_end = out.index(b"\n", at)
            header = out[at:header_end].split()
            if len(header) != 3:
                raise GitError(f"git cat-file failed: object {name} is missing")
            size = int(header[2])
            found[name] = out[header_end + 1 : header_end + 1 + size]
            at = header_end + 2 + size
        return found

    def _ignored(self) -> tuple[frozenset[str] | None, dict[str, Fingerprint]]:
        """The ignored paths (a wholly ignored folder as one; None when git could not list
        them), and the stat data of the first MAX_WATCHED."""
        args = ["ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory"]
        try:
            listed = [path.rstrip("/") for path in self._paths(args)]
        except Blocked:  # said by the untracked files' listing
            return None, {}
        watched: dict[str, Fingerprint] = {}
        with WorkTree(self.top) as tree:
            for path in listed[:MAX_WATCHED]:
                info = tree.status(path)
                if info is not None:
                    watched[path] = fingerprint(info)
        return frozenset(listed), watched

    def _paths(self, args: list[str]) -> list[str]:
        out = self.git(args).decode(errors="surrogateescape")
        return [path for path in out.split("\0") if path]


def _prefixes(path: str) -> Iterable[str]:
    """`path`'s folders from the top, then `path` itself: `a`, `a/b`, `a/b/c`."""
    parts = path.split("/")
    return ("/".join(parts[:n]) for n in range(1, len(parts) + 1))


def changed_watched(before: dict[str, Fingerprint], after: dict[str, Fingerprint]) -> list[str]:
    """The watched paths whose stat data differs (made, changed or removed) between two."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def _git_names(paths: list[str]) -> list[bytes]:
    """`paths` as git names them, in git's order (the bytes'): encoded in one step, as no name
    holds a NUL, and sorted again only where a name's bytes are not UTF-8 (timsort finds the
    rest in order in one pass)."""
    if not paths:
        return []
    names = "\0".join(paths).encode(errors="surrogateescape").split(b"\0")
    names.sort()
    return names


def _listing(paths: list[str], max_file_bytes: int) -> str:
    """A digest of the paths a snapshot lists (and of the size over which it keeps none)."""
    joined = "\0".join(paths).encode(errors="surrogateescape")
    return hashlib.sha256(b"%d\0%s" % (max_file_bytes, joined)).hexdigest()


def _absent(raw: str) -> str | None:
    return None if raw == "000000" else raw
