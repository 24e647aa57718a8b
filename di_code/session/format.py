"""The session file format: a header line, then one JSON entry per line.

```
{"type": "session", "version": 1, "id": "...", "cwd": "/abs/path", "timestamp": 1717000000000}
{"type": "message", "id": "a1b2c3d4e5f6", "parent_id": null, "timestamp": ..., "message": {...}}
{"type": "model_change", "id": "...", "parent_id": "a1b2...", "timestamp": ...,
 "provider": "openai", "model_id": "gpt-4o"}
{"type": "compaction", "id": "...", "parent_id": "...", "timestamp": ..., "summary": "...",
 "first_kept_entry_id": "...", "tokens_before": 123456}
{"type": "checkpoint", "id": "...", "parent_id": "...", "timestamp": ..., "prompt": 3,
 "phase": "tool-after", "kind": "git", "ref": "<tree sha>", "leaf_id": null, "title": "...",
 "skipped": ["<reason>\t<path>"], "paths": ["src/app.py"]}
{"type": "branch", "id": "...", "parent_id": "...", "timestamp": ...}
```
Timestamps are milliseconds since the epoch. Entries form a tree through `parent_id`; the
conversation is the path from the last entry to the root. Older versions are upgraded in memory
by `migrate` before decoding; a newer version is refused, never overwritten.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal, TypeAlias

import msgspec

from di_code.ai.codec import CodecError, int_field, message_from_dict, to_dict
from di_code.ai.types import Message
from di_code.system.errors import DiCodeError

FORMAT_VERSION = 1

Raw: TypeAlias = dict[str, Any]
Migration: TypeAlias = Callable[[Raw, list[Raw]], tuple[Raw, list[Raw]]]
MIGRATIONS: dict[int, Migration] = {}
"""`MIGRATIONS[v]` turns a version-v header and entries into version v+1 (raw JSON dicts,
one entry for each entry, in order, so warnings can still name line numbers)."""


class SessionError(DiCodeError):
    """A session cannot be found, read or written; the message is one line for the user."""


class SessionHeader(msgspec.Struct, frozen=True):
    id: str
    cwd: str
    timestamp: int
    version: int = FORMAT_VERSION
    origin: str | None = None
    """The command that started it ("chat" or "run"): `chat -c` continues a chat, not a run."""

    def to_dict(self) -> Raw:
        data: Raw = {
            "type": "session",
            "version": self.version,
            "id": self.id,
            "cwd": self.cwd,
            "timestamp": self.timestamp,
        }
        if self.origin is not None:
            data["origin"] = self.origin
        return data


class MessageEntry(msgspec.Struct, frozen=True):
    id: str
    parent_id: str | None
    timestamp: int
    message: Message
    type: ClassVar[Literal["message"]] = "message"


class ModelChangeEntry(msgspec.Struct, frozen=True):
    id: str
    parent_id: str | None
    timestamp: int
    provider: str
    model_id: str
    type: ClassVar[Literal["model_change"]] = "model_change"


class CompactionEntry(msgspec.Struct, frozen=True):
    """Everything before `first_kept_entry_id` is replaced by `summary` (None: nothing kept)."""

    id: str
    parent_id: str | None
    timestamp: int
    summary: str
    first_kept_entry_id: str | None
    tokens_before: int
    type: ClassVar[Literal["compaction"]] = "compaction"


CheckpointPhase: TypeAlias = Literal[
    "before", "tool-before", "tool-after", "after", "undo", "rewind"
]
CHECKPOINT_PHASES: tuple[CheckpointPhase, ...] = (
    "before", "tool-before", "tool-after", "after", "undo", "rewind"
)  # fmt: skip
"""before/after a prompt, and around each of its tool calls that may change files (what
changed between a tool-before and its tool-after is the tool's, anything else the user's);
"undo": the files went back to before prompt N (N and later are undone); "rewind": the
conversation went back to before prompt N (a new branch starts)."""


class CheckpointEntry(msgspec.Struct, frozen=True):
    """The files as they were before (or after) prompt number `prompt`, or an undo back to it.

    `kind` "git": `ref` is a tree in the repository; "files": `ref` names the folder of saved
    originals next to the session file. `leaf_id` is the conversation's last entry before the
    prompt (where a rewind of the conversation continues from)."""

    id: str
    parent_id: str | None
    timestamp: int
    prompt: int
    phase: CheckpointPhase
    kind: Literal["git", "files"]
    ref: str
    leaf_id: str | None = None
    title: str = ""
    skipped: tuple[str, ...] = ()
    paths: tuple[str, ...] | None = None
    """tool-after: the only paths the tool calls could change (write/edit), relative to the
    work tree; None: any path (bash)."""
    type: ClassVar[Literal["checkpoint"]] = "checkpoint"


class BranchEntry(msgspec.Struct, frozen=True):
    """The conversation goes on from `parent_id`, the end of the branch `/tree` moved to:
    a session resumes from the entry written last, so this puts the chosen branch there."""

    id: str
    parent_id: str | None
    timestamp: int
    type: ClassVar[Literal["branch"]] = "branch"


Entry: TypeAlias = MessageEntry | ModelChangeEntry | CompactionEntry | CheckpointEntry | BranchEntry


def entry_to_dict(entry: Entry) -> Raw:
    data: Raw = to_dict(entry)
    return data


def header_from_dict(data: Any) -> SessionHeader:
    """Read a (migrated) header; raise SessionError when it is not one."""
    if not isinstance(data, dict) or data.get("type") != "session":
        raise SessionError("not a di-code session file (no session header)")
    session_id, cwd = data.get("id"), data.get("cwd")
    if not isinstance(session_id, str) or not session_id or not isinstance(cwd, str):
        raise SessionError("the session header has no valid id or cwd")
    try:
        timestamp = int_field(data, "timestamp")
    except CodecError:
        raise SessionError("the session header has an invalid timestamp") from None
    origin = data.get("origin")
    return SessionHeader(
        session_id, cwd, timestamp, FORMAT_VERSION, origin if isinstance(origin, str) else None
    )


def entry_from_dict(data: Any) -> Entry:
    """Decode one entry; raise CodecError with a one-line reason on a bad shape."""
    if not isinstance(data, dict):
        raise CodecError("entry must be an object")
    entry_id, parent_id = data.get("id"), data.get("parent_id")
    if not isinstance(entry_id, str) or not entry_id:
        raise CodecError("entry has no id")
    if parent_id is not None and not isinstance(parent_id, str):
        raise CodecError("entry parent_id must be a string or null")
    timestamp = _timestamp(data)
    kind = data.get("type")
    if kind == "message":
        message = message_from_dict(data.get("message"))
        if not 0 <= message.timestamp <= LAST_TIMESTAMP:
            raise CodecError("the message's timestamp is out of range")
        return MessageEntry(entry_id, parent_id, timestamp, message)
    if kind == "model_change":
        return ModelChangeEntry(
            entry_id, parent_id, timestamp, _text(data, "provider"), _text(data, "model_id")
        )
    if kind == "compaction":
        kept = data.get("first_kept_entry_id")
        if kept is not None and not isinstance(kept, str):
            raise CodecError("first_kept_entry_id must be a string or null")
        summary = _text(data, "summary")
        return CompactionEntry(
            entry_id, parent_id, timestamp, summary, kept, int_field(data, "tokens_before")
        )
    if kind == "checkpoint":
        return _checkpoint(entry_id, parent_id, timestamp, data)
    if kind == "branch":
        return BranchEntry(entry_id, parent_id, timestamp)
    raise CodecError(f"unknown entry type {kind!r}")


def _checkpoint(entry_id: str, parent_id: str | None, timestamp: int, data: Raw) -> Entry:
    phase, kind, leaf = data.get("phase"), data.get("kind"), data.get("leaf_id")
    skipped, paths = data.get("skipped", []), data.get("paths")
    if phase not in CHECKPOINT_PHASES or kind not in ("git", "files"):
        raise CodecError("checkpoint has an unknown phase or kind")
    if leaf is not None and not isinstance(leaf, str):
        raise CodecError("checkpoint leaf_id must be a string or null")
    if not isinstance(skipped, list) or not all(isinstance(p, str) for p in skipped):
        raise CodecError("checkpoint skipped must be a list of paths")
    valid_paths = isinstance(paths, list) and all(isinstance(p, str) for p in paths)
    if paths is not None and not valid_paths:
        raise CodecError("checkpoint paths must be a list of paths or null")
    return CheckpointEntry(
        entry_id,
        parent_id,
        timestamp,
        int_field(data, "prompt"),
        phase,
        kind,
        _text(data, "ref"),
        leaf,
        str(data.get("title", "")),
        tuple(skipped),
        tuple(paths) if paths is not None else None,
    )


def joined(entries: list[Entry]) -> list[Entry]:
    """The entries with each one whose parent is not among those before it (a line skipped
    as corrupt, or a parent_id naming nothing) made to follow the entry before it: the file is
    appended in order, so that is the parent it most likely had. Otherwise the conversation,
    walked back from its last entry, would stop there and lose everything above one bad line."""
    out: list[Entry] = []
    known: set[str] = set()
    for entry in entries:
        if entry.parent_id is not None and entry.parent_id not in known:
            entry = msgspec.structs.replace(entry, parent_id=out[-1].id if out else None)
        known.add(entry.id)
        out.append(entry)
    return out


def migrate(header: Raw, entries: list[Raw]) -> tuple[Raw, list[Raw]]:
    """Bring an older file's raw JSON up to FORMAT_VERSION; refuse a newer or unknown one."""
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise SessionError(f"the session header has an invalid version {version!r}")
    if version > FORMAT_VERSION:
        raise SessionError(
            f"session format version {version} is newer than this di-code supports "
            f"({FORMAT_VERSION}); upgrade di-code to open it"
        )
    while version < FORMAT_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise SessionError(f"session format version {version} can no longer be read")
        header, entries = step(header, entries)
        version += 1
        header = {**header, "version": version}
    return header, entries


LAST_TIMESTAMP = 253_402_300_799_999
"""The last millisecond of the year 9999, the last a date can show: a later time (1e30) is
not one di-code wrote, and showing it would fail."""


def _timestamp(data: Raw) -> int:
    timestamp = int_field(data, "timestamp")
    if not 0 <= timestamp <= LAST_TIMESTAMP:
        raise CodecError("timestamp is out of range")
    return timestamp


def _text(data: Raw, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise CodecError(f"{key!r} must be a string")
    return value
