"""Checkpoints: every prompt can be taken back, including what bash changed (SPEC §7).

Before each prompt the files are snapshotted (a git tree inside a git work tree, the originals
of what write/edit change elsewhere) and recorded in the session as `checkpoint` entries; after
the prompt the state it left is recorded too, so an undo can tell the user's later edits from
the agent's and never overwrite them silently. The snapshot runs on a worker thread once the
model's answer starts (git on a large tree would otherwise compete with sending the request);
the first tool waits for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from di_code.agent.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageUpdateEvent,
    ToolExecutionStartEvent,
)
from di_code.ai.types import UserMessage
from di_code.session.file_backup import FileBackup, Original, content_hash
from di_code.session.format import CheckpointEntry
from di_code.session.git_snapshot import (
    DEFAULT_MAX_FILE_BYTES,
    GitError,
    GitSnapshots,
    Snapshot,
    work_tree_top,
)
from di_code.session.session import Session

logger = logging.getLogger(__name__)

READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls"})
"""Tools that change no file: a prompt that ran only these needs no second snapshot."""
FILE_TOOLS = frozenset({"write", "edit"})
"""Outside git, only these tools' changes are captured (their `path` argument)."""

Locate = Callable[[str], Path]
"""Turns a tool's `path` argument into the absolute file (raises when it is refused)."""


@dataclass(frozen=True, slots=True)
class PromptCheckpoint:
    """One prompt's checkpoint, read back from the session."""

    number: int
    title: str
    kind: Literal["git", "files"]
    before: str
    after: str | None
    leaf_id: str | None
    timestamp: int
    skipped: tuple[str, ...] = ()
    undone: bool = False


@dataclass(slots=True)
class UndoReport:
    target: PromptCheckpoint
    restored: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    not_restorable: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    """Files the user changed after the agent did: left alone unless forced."""
    applied: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.restored or self.created or self.removed)

    def lines(self) -> list[str]:
        """What the undo did (or would do), one line per file."""
        out = [f"restored {path}" for path in self.restored]
        out += [f"created back {path}" for path in self.created]
        out += [f"removed {path}" for path in self.removed]
        out += [f"not restorable (too large or not captured): {p}" for p in self.not_restorable]
        return out


class NothingToUndo(Exception):
    """No prompt of the session changed a file that is not already undone."""


def prompt_checkpoints(session: Session) -> list[PromptCheckpoint]:
    """Every prompt's checkpoint in the session file, oldest first, with undo marks."""
    found: dict[int, PromptCheckpoint] = {}
    for entry in session.entries:
        if not isinstance(entry, CheckpointEntry):
            continue
        current = found.get(entry.prompt)
        if entry.phase == "before":
            found[entry.prompt] = PromptCheckpoint(
                entry.prompt,
                entry.title,
                entry.kind,
                entry.ref,
                None,
                entry.leaf_id,
                entry.timestamp,
                entry.skipped,
            )
        elif entry.phase == "after" and current is not None:
            found[entry.prompt] = _with(current, after=entry.ref, skipped=entry.skipped)
        elif entry.phase == "undo":
            for number, checkpoint in found.items():
                if number >= entry.prompt:
                    found[number] = _with(checkpoint, undone=True)
    return [found[number] for number in sorted(found)]


def _with(
    checkpoint: PromptCheckpoint,
    *,
    after: str | None = None,
    skipped: tuple[str, ...] = (),
    undone: bool | None = None,
) -> PromptCheckpoint:
    return PromptCheckpoint(
        checkpoint.number,
        checkpoint.title,
        checkpoint.kind,
        checkpoint.before,
        after if after is not None else checkpoint.after,
        checkpoint.leaf_id,
        checkpoint.timestamp,
        tuple(dict.fromkeys((*checkpoint.skipped, *skipped))),
        checkpoint.undone if undone is None else undone,
    )


def backup_folder(session: Session, ref: str) -> Path:
    """Where the originals of one prompt are kept (outside git), beside the session file."""
    return session.path.parent / f"{session.path.stem}.checkpoints" / ref


class Checkpointer:
    """Takes the checkpoints of one session's prompts; subscribe `on_event` to the Agent."""

    def __init__(
        self,
        session: Session,
        locate: Locate,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        on_warning: Callable[[str], None] = lambda message: None,
    ) -> None:
        self.session = session
        self.locate = locate
        self.max_file_bytes = max_file_bytes
        self.on_warning = on_warning
        self._git: GitSnapshots | None = None
        self._git_known = False
        self._number: int | None = None
        """The current prompt's number; read from the session once, then counted here."""
        self._before = ""
        """The current prompt's before-snapshot tree (git)."""
        self._leaf: str | None = None
        self._title = ""
        self._snapshot: asyncio.Task[Snapshot | None] | None = None
        self._backup: FileBackup | None = None
        self._recorded = False
        self._mutated = False
        self._failed = False

    def _take(self) -> Snapshot | None:
        """A snapshot of the work tree, or None outside git (found out once, off the main
        thread, so start-up never waits for git)."""
        if not self._git_known:
            self._git = git_snapshots(Path(self.session.cwd), self.max_file_bytes)
            self._git_known = True
            if self._git is not None:
                self._git.prune(self._live_sessions())
        return self._git.take() if self._git is not None else None

    def _live_sessions(self) -> set[str]:
        """The ids of every session file in the store (file names end in `_<id>.jsonl`)."""
        store = self.session.path.parent.parent
        live = {path.stem.rpartition("_")[2] for path in store.glob("*/*.jsonl")}
        return live | {self.session.id}

    async def on_event(self, event: AgentEvent) -> None:
        if isinstance(event, AgentStartEvent):
            self._begin()
        elif isinstance(event, MessageUpdateEvent):
            self._start_snapshot()  # the request is out: git no longer competes with it
        elif isinstance(event, MessageEndEvent) and isinstance(event.message, UserMessage):
            self._title = self._title or _title(event.message)
        elif isinstance(event, ToolExecutionStartEvent):
            await self._before_tool(event)
        elif isinstance(event, AgentEndEvent):
            await self._end()

    def _begin(self) -> None:
        if self._number is None:
            self._number = max((c.number for c in prompt_checkpoints(self.session)), default=0)
        self._number += 1
        self._leaf, self._title = self.session.leaf_id, ""
        self._recorded = self._mutated = self._failed = False
        self._backup = None
        self._snapshot = None

    def _start_snapshot(self) -> asyncio.Task[Snapshot | None]:
        if self._snapshot is None:
            self._snapshot = asyncio.ensure_future(asyncio.to_thread(self._take))
        return self._snapshot

    async def _before_tool(self, event: ToolExecutionStartEvent) -> None:
        await self._record_before()
        if event.tool_name in READ_ONLY_TOOLS:
            return
        self._mutated = True
        if self._git is None and event.tool_name in FILE_TOOLS and self._backup is not None:
            path = event.arguments.get("path") if isinstance(event.arguments, dict) else None
            if isinstance(path, str):
                self._save_original(self._backup, path)

    def _save_original(self, backup: FileBackup, path: str) -> None:
        try:
            backup.save(self.locate(path))
        except Exception:  # a refused path: the tool says so; an unreadable file: not kept
            logger.debug("no original kept for %r", path, exc_info=True)

    async def _record_before(self) -> None:
        if self._recorded:
            return
        self._recorded = True
        try:
            snapshot = await self._start_snapshot()
            if snapshot is not None and self._git is not None:
                self._git.keep(f"{self.session.id}/{self._number}", snapshot.tree)
        except GitError as exc:
            self._failed = True
            self.on_warning(f"checkpoint failed, this prompt cannot be undone: {exc}")
            return
        if snapshot is None:
            ref = str(self._number)
            folder = backup_folder(self.session, ref)
            self._backup = FileBackup(folder, max_file_bytes=self.max_file_bytes)
            self._append("before", "files", ref, ())
        else:
            self._before = snapshot.tree
            self._append("before", "git", snapshot.tree, snapshot.skipped)

    async def _end(self) -> None:
        await self._record_before()
        if self._failed:
            return
        if self._backup is not None:
            self._backup.seal()
            self._append("after", "files", str(self._number), ())
            return
        if not self._mutated:
            self._append("after", "git", self._before, ())
            return
        try:
            snapshot = await asyncio.to_thread(self._take)
            assert snapshot is not None and self._git is not None
            self._git.keep(f"{self.session.id}/{self._number}-after", snapshot.tree)
        except GitError as exc:
            self.on_warning(f"checkpoint after the prompt failed: {exc}")
            return
        self._append("after", "git", snapshot.tree, snapshot.skipped)

    def _append(
        self, phase: Literal["before", "after"], kind: Literal["git", "files"], ref: str,
        skipped: tuple[str, ...],
    ) -> None:  # fmt: skip
        leaf = self._leaf if phase == "before" else None
        assert self._number is not None  # set by _begin, which every prompt starts with
        self.session.append_checkpoint(
            self._number, phase, kind, ref, leaf_id=leaf, title=self._title, skipped=skipped
        )


def _title(message: UserMessage) -> str:
    text = " ".join(part.text for part in message.content if hasattr(part, "text"))
    return (text.strip().splitlines() or [""])[0][:120]


def git_snapshots(
    folder: Path, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> GitSnapshots | None:
    """Snapshots of the git work tree `folder` is in; None outside git."""
    top = work_tree_top(folder)
    return GitSnapshots(top, max_file_bytes=max_file_bytes) if top is not None else None


def undo(session: Session, *, to: int | None = None, force: bool = False) -> UndoReport:
    """Bring the files back to how they were before prompt `to` (default: the newest prompt
    that changed something and is not undone). Files the user changed since the agent did
    are conflicts: with any, nothing is written unless `force`. Raises NothingToUndo."""
    checkpoints = [c for c in prompt_checkpoints(session) if not c.undone]
    target = _target(checkpoints, to)
    git = git_snapshots(Path(session.cwd)) if target.kind == "git" else None
    later = [c for c in checkpoints if c.number >= target.number]
    if target.kind == "git":
        if git is None:
            raise NothingToUndo("this checkpoint was taken in a git work tree that is gone")
        report = _undo_git(git, target, later, force)
    else:
        report = _undo_files(session, target, later, force)
    if report.applied:
        session.append_checkpoint(target.number, "undo", target.kind, target.before)
    return report


def _target(checkpoints: list[PromptCheckpoint], to: int | None) -> PromptCheckpoint:
    if to is not None:
        for checkpoint in checkpoints:
            if checkpoint.number == to:
                return checkpoint
        raise NothingToUndo(f"no checkpoint {to} to go back to (see --list)")
    for checkpoint in reversed(checkpoints):
        if _changed_anything(checkpoint):
            return checkpoint
    raise NothingToUndo("nothing to undo")


def _changed_anything(checkpoint: PromptCheckpoint) -> bool:
    if checkpoint.after is None:
        return True  # the prompt never ended (a crash): assume it changed something
    if checkpoint.kind == "files":
        return True  # its manifest is read by the undo; an empty one restores nothing
    return checkpoint.before != checkpoint.after


def _undo_git(
    git: GitSnapshots, target: PromptCheckpoint, later: list[PromptCheckpoint], force: bool
) -> UndoReport:
    report = UndoReport(target)
    now = git.take()
    user_changed = _user_changes(git, later, now.tree)
    changes = git.changes(now.tree, target.before)
    report.not_restorable = sorted({p for c in later for p in c.skipped} | set(now.skipped))
    report.conflicts = sorted(c.path for c in changes if c.path in user_changed)
    for change in changes:
        if change.old_mode is None:
            report.created.append(change.path)
        elif change.new_mode is None:
            report.removed.append(change.path)
        else:
            report.restored.append(change.path)
    if report.conflicts and not force:
        return report
    git.restore(target.before, [c.path for c in changes if c.new_mode is not None])
    for path in report.removed:
        _remove(git.top, path)
    report.applied = True
    return report


def _user_changes(git: GitSnapshots, later: list[PromptCheckpoint], now: str) -> set[str]:
    """Paths changed by someone other than the agent: between one prompt's end and the next
    prompt's start, and since the last prompt's end."""
    changed: set[str] = set()
    for current, following in zip(later, [*later[1:], None], strict=True):
        if current.after is None:
            continue
        until = following.before if following is not None else now
        changed.update(change.path for change in git.changes(current.after, until))
    return changed


def _remove(top: Path, relative: str) -> None:
    path = top / relative
    path.unlink(missing_ok=True)
    folder = path.parent
    while folder != top and folder.is_relative_to(top):
        try:
            folder.rmdir()  # only when empty: a folder the prompt created
        except OSError:
            break
        folder = folder.parent


def _undo_files(
    session: Session, target: PromptCheckpoint, later: list[PromptCheckpoint], force: bool
) -> UndoReport:
    report = UndoReport(target)
    root = Path(session.cwd)
    earliest: dict[str, tuple[FileBackup, Original]] = {}
    last_after: dict[str, str | None] = {}
    for checkpoint in later:
        backup = FileBackup(backup_folder(session, checkpoint.before), max_file_bytes=0)
        for original in backup.originals:
            previous = last_after.get(original.path)
            copy = backup.folder / original.copy if original.copy is not None else None
            if previous is not None and copy is not None and content_hash(copy) != previous:
                report.conflicts.append(_shown(original.path, root))
            earliest.setdefault(original.path, (backup, original))
            last_after[original.path] = original.after_hash
    for path, after in last_after.items():
        if after is not None and content_hash(Path(path)) != after:
            report.conflicts.append(_shown(path, root))
    report.conflicts = sorted(set(report.conflicts))
    actions: list[tuple[FileBackup, Original]] = []
    for backup, original in earliest.values():
        shown, exists = _shown(original.path, root), Path(original.path).exists()
        if original.too_large:
            report.not_restorable.append(shown)
        elif not original.existed:
            if exists:
                report.removed.append(shown)
                actions.append((backup, original))
        else:
            (report.restored if exists else report.created).append(shown)
            actions.append((backup, original))
    if report.conflicts and not force:
        return report
    for backup, original in actions:
        backup.restore(original)
    report.applied = True
    return report


def _shown(path: str, root: Path) -> str:
    candidate = Path(path)
    return str(candidate.relative_to(root)) if candidate.is_relative_to(root) else path
