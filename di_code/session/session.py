"""One session: its entries in memory, appended to its JSONL file as they happen.

The file is created with the first entry, so a run aborted before anything happened leaves no
empty file. The current leaf is the entry appended last; the conversation is the path from it
to the root, with the latest compaction on that path applied.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import msgspec

from di_code.agent.agent import Agent
from di_code.ai.codec import CodecError
from di_code.ai.types import Clock, Message, now_ms
from di_code.session import jsonl, recording
from di_code.session.format import (
    FORMAT_VERSION,
    BranchEntry,
    CheckpointEntry,
    CheckpointPhase,
    CompactionEntry,
    Entry,
    MessageEntry,
    ModelChangeEntry,
    SessionError,
    SessionHeader,
    entry_from_dict,
    entry_to_dict,
    header_from_dict,
    joined,
    migrate,
)
from di_code.session.holder import SessionHold
from di_code.session.summary import summary_message
from di_code.system.abort import AbortSignal
from di_code.system.disk_sync import Syncs, wait_synced
from di_code.system.own_thread import on_own_thread
from di_code.system.private_files import private_folder


class Session:
    def __init__(
        self,
        path: Path,
        header: SessionHeader,
        entries: Sequence[Entry] = (),
        warnings: Sequence[str] = (),
        *,
        now: Clock = now_ms,
        upgrade: bool = False,
        held: SessionHold | None = None,
    ) -> None:
        self.path = path
        self.header = header
        self.warnings = list(warnings)
        """Problems met while loading (torn or corrupt lines): show them, they are not fatal."""
        self._entries = list(entries)
        self._by_id = {entry.id: entry for entry in self._entries}
        self._branch = self.branch_to(self._entries[-1].id if self._entries else None)
        """Root to current leaf; new entries always extend it, so it is walked only once."""
        self._now = now
        self._upgrade = upgrade
        self._model = self._branch_model()
        self._queue: list[Entry] | None = None
        """Entries waiting behind a long message being written on its thread (None: none is)."""
        self._queue_lock = threading.Lock()
        self._hold = held or SessionHold(header.id)
        """Taken before every write (a stored session: when opened, see SessionStore.open)."""
        self.write_error: SessionError | None = None
        """The first write that failed (a full disk): what was not saved; `run` exits 1."""
        self._syncs = Syncs()
        """Its lines' fsyncs (disk_sync): one that failed is told by the next write."""

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def cwd(self) -> str:
        return self.header.cwd

    @property
    def entries(self) -> list[Entry]:
        """Every entry of the file in order, on any branch."""
        return list(self._entries)

    @classmethod
    def load(cls, path: Path, *, now: Clock = now_ms, held: SessionHold | None = None) -> Session:
        """Read a session file; bad lines become warnings, a bad header a SessionError.
        `held`: this process's hold on it, taken before reading (see `hold`)."""
        from di_code.session.collector import collector_paused  # a new session loads none

        with collector_paused():
            return cls._load(path, now, held)

    @classmethod
    def _load(cls, path: Path, now: Clock, held: SessionHold | None) -> Session:
        try:
            records, warnings = jsonl.read_records(path)
        except OSError as exc:
            raise SessionError(str(exc)) from exc
        first = records[0].data if records and records[0].line == 1 else None
        if not isinstance(first, dict) or first.get("type") != "session":
            raise SessionError(f"{path.name}: not a di-code session file (no session header)")
        try:
            raw_header, raw_entries = migrate(first, [r.data for r in records[1:]])
            header = header_from_dict(raw_header)
        except SessionError as exc:
            raise SessionError(f"{path.name}: {exc}") from exc
        entries: list[Entry] = []
        for record, raw in zip(records[1:], raw_entries, strict=True):
            try:
                entries.append(entry_from_dict(raw))
            except CodecError as exc:
                warnings.append(f"{path.name}: line {record.line} was skipped ({exc})")
        entries = joined(entries)
        upgrade = first.get("version") != FORMAT_VERSION
        return cls(path, header, entries, warnings, now=now, upgrade=upgrade, held=held)

    @property
    def _leaf(self) -> str | None:
        return self._branch[-1].id if self._branch else None

    def branch(self) -> list[Entry]:
        """The entries from the root to the current leaf."""
        return list(self._branch)

    def branch_to(self, leaf: str | None) -> list[Entry]:
        """The entries from the root to `leaf` (None: none), on whichever branch it is."""
        path: list[Entry] = []
        seen: set[str] = set()
        current = leaf
        while current is not None and current not in seen:
            seen.add(current)
            entry = self._by_id.get(current)
            if entry is None:
                break
            path.append(entry)
            current = entry.parent_id
        path.reverse()
        return path

    def context(self) -> list[Message]:
        """The messages to give the Agent: the latest summary, what it kept, what came after."""
        return [message for _, message in self.context_with_ids()]

    def context_with_ids(self) -> list[tuple[str | None, Message]]:
        """`context()` with each message's entry id (None for the summary)."""
        branch = self._branch
        start = 0
        out: list[tuple[str | None, Message]] = []
        compactions = [i for i, e in enumerate(branch) if isinstance(e, CompactionEntry)]
        if compactions:
            at = compactions[-1]
            compaction = branch[at]
            assert isinstance(compaction, CompactionEntry)
            out.append((None, summary_message(compaction.summary, compaction.timestamp)))
            ids = [entry.id for entry in branch[:at]]
            kept = compaction.first_kept_entry_id
            start = ids.index(kept) if kept in ids else at
        out.extend(
            (entry.id, entry.message) for entry in branch[start:] if isinstance(entry, MessageEntry)
        )
        return out

    def model(self) -> tuple[str, str] | None:
        """The (provider, model_id) last used on this branch, to resume with the same model."""
        return self._model

    def _branch_model(self) -> tuple[str, str] | None:
        for entry in reversed(self._branch):
            if isinstance(entry, ModelChangeEntry):
                return entry.provider, entry.model_id
        return None

    def append_message(self, message: Message, *, request_follows: bool = False) -> MessageEntry:
        """`request_follows`: the model request goes out next (a prompt), and must not wait
        for the fsync thread's start: the line is in the file at once, its fsync's thread is
        started by `disk_sync.start_syncing` once the request is out (the recording does), or
        by the next entry, `synced` or the process's exit (di_code.system.disk_sync)."""
        entry = MessageEntry(self._new_id(), self._leaf, self._now(), message)
        self._syncs.deferred = request_follows
        try:
            self._append(entry)
        finally:
            self._syncs.deferred = False
        return entry

    def append_model_change(self, provider: str, model_id: str) -> ModelChangeEntry:
        entry = ModelChangeEntry(self._new_id(), self._leaf, self._now(), provider, model_id)
        self._append(entry)
        self._model = (provider, model_id)
        return entry

    def append_compaction(
        self, summary: str, first_kept_entry_id: str | None, tokens_before: int
    ) -> CompactionEntry:
        if first_kept_entry_id is not None and first_kept_entry_id not in self._by_id:
            raise SessionError(f"no entry {first_kept_entry_id!r} in session {self.id}")
        entry = CompactionEntry(
            self._new_id(), self._leaf, self._now(), summary, first_kept_entry_id, tokens_before
        )
        self._append(entry)
        return entry

    def append_checkpoint(
        self,
        prompt: int,
        phase: CheckpointPhase,
        kind: Literal["git", "files"],
        ref: str,
        *,
        leaf_id: str | None = None,
        title: str = "",
        skipped: Sequence[str] = (),
        paths: Sequence[str] | None = None,
    ) -> CheckpointEntry:
        entry = CheckpointEntry(
            self._new_id(),
            self._leaf,
            self._now(),
            prompt,
            phase,
            kind,
            ref,
            leaf_id,
            title,
            tuple(skipped),
            tuple(paths) if paths is not None else None,
        )
        self._append(entry)
        return entry

    @property
    def leaf_id(self) -> str | None:
        """The entry the next one will follow (None: the conversation is empty)."""
        return self._leaf

    def branch_from(self, entry_id: str | None) -> None:
        """Continue the conversation after `entry_id` (None: from the start): the next entry
        starts a new branch there; the old branch stays in the file."""
        if entry_id is not None and entry_id not in self._by_id:
            raise SessionError(f"no entry {entry_id!r} in session {self.id}")
        self._branch = self.branch_to(entry_id)
        self._model = self._branch_model()

    def switch_to(self, entry_id: str | None) -> None:
        """`branch_from`, written first (`/tree`, `/rewind`): a session resumes after its last
        entry, and a write the disk refuses leaves the conversation where it was."""
        if entry_id is not None and entry_id not in self._by_id:
            raise SessionError(f"no entry {entry_id!r} in session {self.id}")
        mark = BranchEntry(self._new_id(), entry_id, self._now())
        self._append(mark)  # a full disk raises here, before anything changed
        self.branch_from(mark.id)

    def record(
        self, agent: Agent, on_error: Callable[[SessionError], None] | None = None
    ) -> Callable[[], None]:
        """Append every message the agent finishes (di_code.session.recording)."""
        return recording.record(self, agent, on_error)

    def _new_id(self) -> str:
        while True:
            candidate = os.urandom(6).hex()
            if candidate not in self._by_id:
                return candidate

    def _private_folder(self) -> None:
        """The session's folder made 0700 (and the sessions folder above it); if another user
        owns either, the session goes on in a private stand-in folder instead."""
        folder = private_folder(self.path.parent, within=self.path.parent.parent)
        if folder != self.path.parent:
            self.path = folder / self.path.name

    def _append(self, entry: Entry) -> None:
        with self._queue_lock:
            if self._queue is not None:  # a long message is being written: this one follows
                self._queue.append(entry)
                self._remember(entry)
                return
        self._write(entry)
        self._remember(entry)

    async def append_long_message(
        self, message: Message, signal: AbortSignal | None
    ) -> MessageEntry:
        """`append_message` for a message too long to encode and write on the event loop (100
        MB: seconds): written on a thread of its own, entries appended meanwhile after it, in
        order. The wait ends when `signal` fires; the writing goes on as long as the process."""
        if self._upgrade:  # an old file is rewritten whole first: not worth a thread
            return self.append_message(message)
        entry = MessageEntry(self._new_id(), self._leaf, self._now(), message)
        with self._queue_lock:
            behind = self._queue is not None
            if self._queue is None:
                self._queue = []
            else:
                self._queue.append(entry)
            self._remember(entry)
        if behind:
            return entry
        written = asyncio.ensure_future(on_own_thread(lambda: self._write_then_queue(entry)))
        stop = asyncio.ensure_future(signal.wait() if signal else asyncio.Event().wait())
        await asyncio.wait([written, stop], return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if written.done():
            written.result()  # a SessionError is raised here, as `append_message` raises it
        return entry

    def _write_then_queue(self, entry: Entry) -> None:
        """On the writer's thread: `entry`, then what was queued behind it, until none is."""
        failure: SessionError | None = None
        try:
            self._write(entry)
        except SessionError as exc:
            failure = exc
        while True:
            with self._queue_lock:
                if not self._queue:
                    self._queue = None
                    break
                queued = self._queue.pop(0)
            try:
                self._write(queued)
            except SessionError as exc:
                self.warnings.append(str(exc))
        if failure is not None:
            raise failure

    def _remember(self, entry: Entry) -> None:
        self._entries.append(entry)
        self._by_id[entry.id] = entry
        self._branch.append(entry)

    def release(self) -> None:
        """Stop being the session's one writer (holder.py); a later write holds it again."""
        self._hold.release()

    def append_copies(self, entries: Sequence[Entry]) -> None:
        """A new session's start (a fork): another's entries, each following the one before,
        written at once (the file made even when there are none). Ids are kept, so a
        compaction still names the entry it kept."""
        for entry in entries:
            self._remember(msgspec.structs.replace(entry, parent_id=self._leaf))
        self._model = self._branch_model()
        self._write(*self._entries)

    async def synced(self, notify: Callable[[str], None] | None = None) -> None:
        """Wait, off the loop, until every entry written so far is on the disk. A failed fsync
        then is `write_error`, told to `notify` when it is the session's first failure (one
        line, as `record` tells a failed write)."""
        await on_own_thread(wait_synced)
        first = self.write_error is None
        with contextlib.suppress(SessionError):
            self._write(synced_only=True)
        if first and self.write_error is not None and notify is not None:
            notify(str(self.write_error))

    def _write(self, *entries: Entry, synced_only: bool = False) -> None:
        try:
            if (failure := self._syncs.failure()) is not None:  # an entry may not be on disk
                raise SessionError(f"cannot write session {self.id}: {failure}")
            if not synced_only:
                self._write_entry(*entries)
        except SessionError as exc:
            if self.write_error is None:
                self.write_error = exc
            raise

    def _write_entry(self, *entries: Entry) -> None:
        try:
            header = jsonl.encode(self.header.to_dict())
            line = b"".join(jsonl.encode(entry_to_dict(entry)) for entry in entries)
        except (TypeError, ValueError, RecursionError) as exc:  # a bug upstream: say it, loudly
            raise SessionError(f"cannot write session {self.id}: {exc}") from exc
        try:
            self._private_folder()
            self._hold.take(self.path)
            if self._upgrade:
                body = b"".join(jsonl.encode(entry_to_dict(e)) for e in self._entries)
                jsonl.replace_file(self.path, header + body)
                self._upgrade = False
            jsonl.append_lines(self.path, line, self._syncs, header=header)
        except OSError as exc:
            raise SessionError(f"cannot write session {self.id}: {exc}") from exc
