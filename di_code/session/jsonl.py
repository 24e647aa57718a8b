"""Locked, crash-tolerant JSON lines: the only code that touches a session file's bytes.

Writers take an exclusive `flock` and append each line with one `O_APPEND` write, so two
processes never interleave bytes; a line left torn by a crash is closed with a newline before
the next append, so it cannot swallow a good entry. Readers take a shared lock, so they never
see another process's half-written line, and skip bad lines with a warning instead of failing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from di_code.ai.codec import MAX_JSON_DEPTH, SURROGATE_ESCAPE, encodable_json
from di_code.ai.json_pieces import holds_long, text_pieces, utf8
from di_code.ai.redaction import redact
from di_code.system.disk_sync import Syncs
from di_code.system.private_files import open_private


class Record(msgspec.Struct, frozen=True):
    line: int
    """1-based line number in the file, for warnings."""
    data: Any


_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_ascii = json.JSONEncoder(separators=(",", ":"))


def encode(data: Any) -> bytes:
    """One line; known secrets never reach the disk (see di_code.ai.redaction). A line with a
    very long string is made in pieces (json_pieces), so a thread making it lets the loop run."""
    if not holds_long(data):
        text = redact(_json.encode(data))
        try:
            return text.encode("utf-8") + b"\n"
        except UnicodeEncodeError:  # a folder's name that is not UTF-8 (the header's cwd):
            return redact(_ascii.encode(data)).encode() + b"\n"  # kept exactly, as escapes
    return utf8(redact("".join(text_pieces(data, _json)))) + b"\n"


def read_lines(path: Path) -> list[bytes]:
    """The file's lines without newlines; the last item is the unterminated tail (often b"")."""
    with _locked(path, os.O_RDONLY, fcntl.LOCK_SH) as fd:
        return _read_all(fd).split(b"\n")


def read_records(path: Path) -> tuple[list[Record], list[str]]:
    """Every parseable line, and one warning per line that was skipped."""
    lines = read_lines(path)
    torn = lines.pop()
    numbered = [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]
    values = parse_all([line for _, line in numbered])
    if values is not None:
        records = [
            Record(number, value) for (number, _), value in zip(numbered, values, strict=True)
        ]
        warnings: list[str] = []
    else:
        records, warnings = _parse_each(path, numbered)
    if torn.strip():
        try:  # a whole line whose newline was lost is still good
            records.append(Record(len(lines) + 1, json.loads(torn)))
        except (ValueError, RecursionError):
            warnings.append(
                f"{path.name}: the last line was cut off (a crash while writing) and was skipped"
            )
    return _usable(path, [*lines, torn], records, warnings), warnings


MAX_DEPTH = 2 * MAX_JSON_DEPTH
"""Deeper than any entry di-code writes (tool data is cut at MAX_JSON_DEPTH): a line nested
deeper was not written by it, and would break the code that walks it (a RecursionError)."""


def _usable(
    path: Path, lines: list[bytes], records: list[Record], warnings: list[str]
) -> list[Record]:
    """The records a session can use: a line nested deeper than MAX_DEPTH is skipped with a
    warning, and one holding a lone surrogate (`\\ud800`, which nothing can encode again) has
    it made U+FFFD. Only lines that could hold either are walked: reading a session is hot."""
    usable: list[Record] = []
    for record in records:
        line = lines[record.line - 1]
        if line.count(b"[") + line.count(b"{") > MAX_DEPTH and _deeper(record.data, MAX_DEPTH):
            warnings.append(f"{path.name}: line {record.line} is nested too deeply and was skipped")
            continue
        if record.line > 1 and SURROGATE_ESCAPE.search(line) is not None:  # line 1: the
            # header, whose folder name is the OS's (a lone surrogate per byte not UTF-8)
            record = Record(record.line, encodable_json(record.data, MAX_DEPTH + 1))
        usable.append(record)
    return usable


def _deeper(value: Any, limit: int) -> bool:
    """Whether `value` nests more than `limit` lists or objects deep (walked without
    recursion: the value may be deeper than the interpreter's stack)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        if children and depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def parse_all(lines: list[bytes]) -> list[Any] | None:
    """Each line's JSON value, parsed in one call; None when any line is not exactly one value.

    One `json.loads` for the whole file is much cheaper than one per line (object keys are
    shared, no per-call overhead). Line i is wrapped as `{"<key>": line}` with a random key
    that occurs nowhere in the file, and the wrappers joined with newlines into one array.
    JSON strings cannot span a newline, so a parse that yields exactly one single-key wrapper
    per line has every wrapper close at its own brace: each value is its line's whole text.
    """
    key = os.urandom(16).hex().encode()
    if any(key in line for line in lines):
        return None
    opener = b'{"' + key + b'":'
    text = b"[" + opener + (b"}\n," + opener).join(lines) + b"}]" if lines else b"[]"
    try:
        wrappers = json.loads(text)
    except (ValueError, RecursionError):
        return None
    name = key.decode()
    if len(wrappers) != len(lines):
        return None
    for wrapper in wrappers:
        if type(wrapper) is not dict or len(wrapper) != 1 or name not in wrapper:
            return None
    return [wrapper[name] for wrapper in wrappers]


def _parse_each(path: Path, numbered: list[tuple[int, bytes]]) -> tuple[list[Record], list[str]]:
    """Line by line, so a corrupt line is named and skipped and the rest still loads."""
    records: list[Record] = []
    warnings: list[str] = []
    for number, line in numbered:
        try:
            records.append(Record(number, json.loads(line)))
        except (ValueError, RecursionError) as exc:
            reason = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
            warnings.append(f"{path.name}: line {number} is corrupt and was skipped ({reason})")
    return records, warnings


def append_lines(path: Path, payload: bytes, syncs: Syncs, *, header: bytes = b"") -> None:
    """Append complete lines; write `header` first when the file is new or empty. A write
    that fails (a full disk) leaves the file as it was (a new one: none). The caller is the
    session's one writer (holder.py), so no one else appends meanwhile. The lines are in the
    file when this returns (a kill cannot lose them); their fsync runs on the sync thread
    (di_code.system.disk_sync), in order, a failed one kept in `syncs`."""
    with _locked(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, fcntl.LOCK_EX) as fd:
        size = os.fstat(fd).st_size
        if size == 0:
            payload = header + payload
        elif os.pread(fd, 1, size - 1) != b"\n":
            payload = b"\n" + payload
        try:
            _write_all(fd, payload)
        except OSError:  # a full disk: no half line is left for the next append to follow
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
                if size == 0:  # nor an empty file, which no load could read (`--continue`)
                    os.unlink(path)
            raise
        syncs.soon(fd)


def replace_file(path: Path, payload: bytes) -> None:
    """Swap in new content atomically (an upgraded old-version file), holding the lock."""
    temporary = path.with_name(path.name + ".tmp")
    with _locked(path, os.O_RDWR, fcntl.LOCK_EX):
        fd = open_private(temporary, os.O_WRONLY | os.O_TRUNC)
        try:
            _write_all(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)


@contextlib.contextmanager
def _locked(path: Path, flags: int, operation: int) -> Iterator[int]:
    try:
        # a file written to is made 0600, even one an older di-code left readable by others
        fd = open_private(path, flags) if flags & os.O_CREAT else os.open(path, flags)
    except OSError as exc:
        raise OSError(f"cannot open {path}: {exc.strerror}") from exc
    try:
        fcntl.flock(fd, operation)
        yield fd
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)  # not left to `close`: a duplicate may still be open
        os.close(fd)


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]
