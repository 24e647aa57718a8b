"""git's index file (version 2), as di-code writes its private one for the snapshots.

The private index holds each captured path with the blob of its raw bytes (hashed by di-code,
never through a filter) and the stat data di-code saw before it read them, so `git diff-files`
compares the stat data of the whole work tree in C instead of Python stat-ing every file.
git may compare whole seconds only (as it is built by default), so an entry gets stat data only
when the file's ctime is of an earlier second than the moment di-code looked at it: any change
after the read then has a later ctime, which git compares (`core.trustctime` is forced on). Nor
is any entry "racily clean" (its mtime as late as the index file's), the one case where git
reads a file to compare it: its mtime is older than RACY_NS, which also covers file systems
that keep times in steps of two seconds. Any other entry has zero stat data, which never
matches: git reports it, and it is hashed again.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import os
import struct

RACY_NS = 3_000_000_000
"""A file modified this recently may change again within the same clock tick of its file
system: it gets no stat data (hashed anew each time)."""
_SECOND = 1_000_000_000
_HEADER = struct.Struct(">4sII")
_STAT = struct.Struct(">10I")
_NAME_MASK = 0xFFF
_MODES = {"100644": 0o100644, "100755": 0o100755, "120000": 0o120000}

Entry = tuple[bytes, bytes]
"""A path (bytes, as git names it) and its entry without the path: stat data, blob, flags."""


def entry(path: bytes, info: os.stat_result | None, mode: str, blob: str, seen_ns: int) -> Entry:
    """The entry of `path`, a file or symlink of git `mode` whose raw bytes are `blob`, with
    the stat data `info` di-code saw at `seen_ns` (`time.time_ns()`), before reading it; none
    when the file was modified within RACY_NS of that, or its status changed that second."""
    if (
        info is None
        or seen_ns - info.st_mtime_ns <= RACY_NS
        or info.st_ctime_ns // _SECOND >= seen_ns // _SECOND
    ):
        stat = _STAT.pack(0, 0, 0, 0, 0, 0, _MODES[mode], 0, 0, 0)
    else:
        m, c = divmod(info.st_mtime_ns, _SECOND), divmod(info.st_ctime_ns, _SECOND)
        stat = _STAT.pack(
            c[0] & 0xFFFFFFFF, c[1], m[0] & 0xFFFFFFFF, m[1], info.st_dev & 0xFFFFFFFF,
            info.st_ino & 0xFFFFFFFF, _MODES[mode], info.st_uid & 0xFFFFFFFF,
            info.st_gid & 0xFFFFFFFF, info.st_size & 0xFFFFFFFF,
        )  # fmt: skip
    return path, stat + bytes.fromhex(blob) + struct.pack(">H", min(len(path), _NAME_MASK))


def encode(entries: list[Entry], object_format: str) -> bytes:
    """The index file of `entries` (sorted by path bytes, as git requires)."""
    parts = [_HEADER.pack(b"DIRC", 2, len(entries))]
    for path, fixed in entries:
        size = len(fixed) + len(path)
        parts += (fixed, path, b"\0" * (8 - size % 8))  # one to eight NULs end the name
    body = b"".join(parts)
    return body + hashlib.new(object_format, body).digest()


def decode(data: bytes, object_format: str) -> dict[bytes, bytes]:
    """path -> its entry without the path; ValueError when `data` is not an index of version
    2 in `object_format` (git wrote it anew in another shape: it is then made again)."""
    digest = hashlib.new(object_format).digest_size
    if len(data) < _HEADER.size + digest:
        raise ValueError("not an index file di-code reads")
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version != 2 or data[-digest:] != checksum(data, object_format):
        raise ValueError("not an index file di-code reads")
    fixed_size = _STAT.size + digest + 2
    found: dict[bytes, bytes] = {}
    at = _HEADER.size
    for _ in range(count):
        fixed = data[at : at + fixed_size]
        if len(fixed) != fixed_size:
            raise ValueError("not an index file di-code reads")
        length = struct.unpack_from(">H", fixed, fixed_size - 2)[0]
        if length & 0xC000:  # a stage or extended flags: not ours
            raise ValueError("not an index file di-code reads")
        start = at + fixed_size
        end = data.index(b"\0", start) if length == _NAME_MASK else start + length
        found[data[start:end]] = fixed
        at += (fixed_size + end - start + 8) & ~7
    return found


def patched(data: bytes, object_format: str, paths: list[bytes], new: list[Entry]) -> bytes | None:
    """The index file `data`, whose entries are those of `paths` (sorted), with the entries of
    `new` (paths among them) in place of theirs and no extension (git's tree cache would name
    the old blobs); None when `data` does not hold exactly `paths`. Each entry's place follows
    from the lengths of the paths before it, so only the changed entries are touched."""
    digest = hashlib.new(object_format).digest_size
    fixed_size = _STAT.size + digest + 2
    if len(data) < _HEADER.size or _HEADER.unpack_from(data)[2] != len(paths):
        return None
    sizes = [(fixed_size + len(path) + 8) & ~7 for path in paths]
    starts = list(itertools.accumulate(sizes, initial=_HEADER.size))
    out = bytearray(data[: starts[-1]])
    if len(out) != starts[-1]:
        return None
    for path, fixed in new:
        at = bisect.bisect_left(paths, path)
        if at == len(paths) or paths[at] != path or len(fixed) != fixed_size:
            return None
        start = starts[at]
        if out[start + fixed_size : start + fixed_size + len(path) + 1] != path + b"\0":
            return None
        out[start : start + fixed_size] = fixed
    return bytes(out) + hashlib.new(object_format, out).digest()


def checksum(data: bytes, object_format: str) -> bytes:
    """The checksum an index file ends with (of everything before it)."""
    return hashlib.new(object_format, data[: -hashlib.new(object_format).digest_size]).digest()
