"""Undo: bring back the files a prompt's tools changed, and only those.

The rule: undo changes a file only when it can prove that the prompt's tools made the change
and nobody changed it since. A path changed at any time no tool was running is the user's and
is kept (restored only with `force`, which is named per path); a path a snapshot could not
capture (too large, a submodule, too many untracked files, ignored, a failed backup) is
unknown and kept. `plan()` says all of that before anything is written; `apply()` reports
each restore that happened and each that failed, never one that did not happen.
"""

from __future__ import annotations

import itertools
import stat
from dataclasses import dataclass, field
from pathlib import Path

from di_code.session.checkpoint_list import (
    TOOL_INTERVALS,
    PromptCheckpoint,
    Step,
    prompt_checkpoints,
)
from di_code.session.checkpoints import backup_folder, git_snapshots
from di_code.session.file_backup import FileBackup, Original, content_hash
from di_code.session.git_run import GitError
from di_code.session.git_snapshot import CHANGED_BY_TOOL, Change, GitSnapshots, parse_skip
from di_code.session.safe_files import remove_empty_folders, remove_file, write_file, write_symlink
from di_code.session.session import Session

USER_CHANGED = "changed by you since the tool did"
FORCED = "changed by you since the tool did, overwritten (--force)"


class NothingToUndo(Exception):
    """No prompt of the session changed a file that is not already undone."""


@dataclass(slots=True)
class Action:
    """One path undo will write: back to `mode`/`blob` (git) or `original` (files); both None
    and no original means delete it."""

    path: str
    shown: str
    mode: str | None = None
    blob: str | None = None
    original: Original | None = None
    backup: FileBackup | None = None

    @property
    def deletes(self) -> bool:
        if self.original is not None:
            return not self.original.existed
        return self.mode is None


@dataclass(slots=True)
class UndoPlan:
    target: PromptCheckpoint
    actions: list[Action] = field(default_factory=list)
    keep: list[tuple[str, str]] = field(default_factory=list)
    """(path, why it is kept) for every path a tool changed that undo leaves alone."""
    forced: list[str] = field(default_factory=list)
    top: Path = Path("/")
    git: GitSnapshots | None = None

    @property
    def restores(self) -> list[str]:
        return [a.shown for a in self.actions if not a.deletes]

    @property
    def deletes(self) -> list[str]:
        return [a.shown for a in self.actions if a.deletes]

    def lines(self) -> list[str]:
        """The plan: restore N, delete M, keep K, each path with its reason."""
        n, m, k = len(self.restores), len(self.deletes), len(self.keep)
        out = [f"undo prompt {self.target.number} ({self.target.title}): "
               f"restore {n}, delete {m}, keep {k}"]  # fmt: skip
        out += [
            f"  restore {p}" + ("  (--force)" if p in self.forced else "") for p in self.restores
        ]
        out += [f"  delete {p}" + ("  (--force)" if p in self.forced else "") for p in self.deletes]
        out += [f"  keep {path or 'untracked files'}: {reason}" for path, reason in self.keep]
        return out


@dataclass(slots=True)
class UndoResult:
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def undo_note(number: int, done: list[str]) -> str:
    """What the model reads of an undo: which files are back as they were, by the user."""
    return (
        f"[Note from di-code: the user undid the file changes since prompt "
        f"{number}: {'; '.join(done)}. Edits made since then no longer stand.]"
    )


def plan(session: Session, *, to: int | None = None, force: bool = False) -> UndoPlan:
    """What undoing prompt `to` (default: the newest prompt that changed something and is not
    undone) and every later prompt would do. Raises NothingToUndo."""
    checkpoints = [c for c in prompt_checkpoints(session) if not c.undone]
    target = _target(checkpoints, to)
    later = [c for c in checkpoints if c.number >= target.number]
    if target.kind == "files":
        return _plan_files(session, target, later, force)
    git = git_snapshots(session)
    if git is None:
        raise NothingToUndo("this checkpoint was taken in a git work tree that is gone")
    return _plan_git(git, target, later, force)


def apply(session: Session, undo_plan: UndoPlan) -> UndoResult:
    """Carry the plan out; the prompt is marked undone only when every action succeeded."""
    result = UndoResult()
    blobs: dict[str, bytes] = {}
    if undo_plan.git is not None:
        try:
            blobs = undo_plan.git.blobs(a.blob for a in undo_plan.actions if a.blob)
        except GitError as exc:
            result.failed = [f"could not read the snapshot: {exc}"]
            return result
    deletes = sorted((a for a in undo_plan.actions if a.deletes), key=lambda a: a.path)
    restores = sorted((a for a in undo_plan.actions if not a.deletes), key=lambda a: a.path)
    for action in [*reversed(deletes), *restores]:  # a file may come back where a folder was
        verb = "deleted" if action.deletes else "restored"
        try:
            _carry_out(action, undo_plan.top, blobs)
        except OSError as exc:
            result.failed.append(f"could not restore {action.shown}: {exc.strerror or exc}")
            continue
        result.done.append(f"{verb} {action.shown}")
    if undo_plan.actions and not result.failed:
        target = undo_plan.target
        session.append_checkpoint(target.number, "undo", target.kind, target.before)
    return result


def _carry_out(action: Action, top: Path, blobs: dict[str, bytes]) -> None:
    path = top / action.path
    if action.original is not None and action.backup is not None:
        action.backup.restore(action.original)
    elif action.mode is None:
        remove_file(path)
    elif action.mode == "120000":
        write_symlink(path, blobs[action.blob or ""].decode(errors="surrogateescape"))
    else:
        write_file(path, blobs[action.blob or ""], _permissions(path, action.mode))
    if action.deletes:
        remove_empty_folders(path, top)


def _permissions(path: Path, mode: str) -> int:
    """Git keeps only the executable bit: the rest of the file's permissions (a 0600 file)
    stay as they are now; a file that is gone comes back 0644 or 0755."""
    executable = mode == "100755"
    try:
        info = path.lstat()
    except OSError:
        return 0o755 if executable else 0o644
    if not stat.S_ISREG(info.st_mode):
        return 0o755 if executable else 0o644
    current = stat.S_IMODE(info.st_mode)
    return current | (current & 0o444) >> 2 if executable else current & ~0o111


def _target(checkpoints: list[PromptCheckpoint], to: int | None) -> PromptCheckpoint:
    if to is not None:
        for checkpoint in checkpoints:
            if checkpoint.number == to:
                return checkpoint
        raise NothingToUndo(f"no checkpoint {to} to go back to (see --list)")
    for checkpoint in reversed(checkpoints):
        if checkpoint.changed:
            return checkpoint
    raise NothingToUndo("nothing to undo")


@dataclass(slots=True)
class _History:
    """What happened to one path over the snapshots since the target prompt started."""

    first: Change
    by_tool: bool = False
    by_user: bool = False
    unknown: str = ""


def _plan_git(
    git: GitSnapshots, target: PromptCheckpoint, later: list[PromptCheckpoint], force: bool
) -> UndoPlan:
    now = git.take()
    chain: list[Step] = [step for checkpoint in later for step in checkpoint.steps]
    chain.append(("tool-before", now.tree, now.skipped, None))  # now: the user's, like any gap
    known: dict[str, _History] = {}
    for old, new in itertools.pairwise(chain):
        tool_interval = (old[0], new[0]) in TOOL_INTERVALS
        for change in git.changes(old[1], new[1]):
            by_tool = tool_interval and (new[3] is None or change.path in new[3])
            history = known.setdefault(change.path, _History(change))
            history.by_tool = history.by_tool or by_tool
            history.by_user = history.by_user or not by_tool
            history.unknown = history.unknown or _unknown(change, old, new)
    differs = {change.path for change in git.changes(target.before, now.tree)}
    undo_plan = UndoPlan(target, top=git.top, git=git)
    for path, history in sorted(known.items()):
        if not history.by_tool or path not in differs:
            continue  # only the user changed it, or it is as it was before the prompt
        if history.unknown:
            undo_plan.keep.append((path, history.unknown))
        elif history.by_user and not force:
            undo_plan.keep.append((path, USER_CHANGED))
        else:
            if history.by_user:
                undo_plan.forced.append(path)
            first = history.first
            undo_plan.actions.append(Action(path, path, first.old_mode, first.old_blob))
    named = {action.path for action in undo_plan.actions} | {path for path, _ in undo_plan.keep}
    undo_plan.keep += _uncaptured(later, named)
    return undo_plan


def _uncaptured(later: list[PromptCheckpoint], named: set[str]) -> list[tuple[str, str]]:
    """What the snapshots could not capture at all: changes a tool made to skipped or ignored
    paths, submodules, every untracked file when there were too many."""
    found: dict[str, str] = {}
    for checkpoint in later:
        for phase, _, skipped, _ in checkpoint.steps:
            for reason, path in map(parse_skip, skipped):
                by_tool = phase == "tool-after" and CHANGED_BY_TOOL in reason
                if by_tool or path == "" or reason.startswith("submodule"):
                    found.setdefault(path, reason)
    return sorted((path, reason) for path, reason in found.items() if path not in named)


def _unknown(change: Change, old: Step, new: Step) -> str:
    """Why a change's path cannot be known (skipped in one of its two snapshots), or ""."""
    for reason, path in (*map(parse_skip, old[2]), *map(parse_skip, new[2])):
        if path == change.path:
            return reason
    for side, step in ((change.old_mode, old), (change.new_mode, new)):
        if side is None and any(path == "" for _, path in map(parse_skip, step[2])):
            return "untracked, and that snapshot captured no untracked file"
    return ""


def _plan_files(
    session: Session, target: PromptCheckpoint, later: list[PromptCheckpoint], force: bool
) -> UndoPlan:
    root = Path(session.cwd)
    undo_plan = UndoPlan(target, top=root.resolve())
    earliest: dict[str, tuple[FileBackup, Original]] = {}
    user_changed: set[str] = set()
    last_after: dict[str, str | None] = {}
    for checkpoint in later:
        backup = FileBackup(backup_folder(session, checkpoint.before), max_file_bytes=0)
        for original in backup.originals:
            previous = last_after.get(original.path)
            if original.user_changed or (
                previous is not None and original.copy and backup.copy_hash(original) != previous
            ):
                user_changed.add(original.path)
            earliest.setdefault(original.path, (backup, original))
            last_after[original.path] = original.after_hash
    for path, after in last_after.items():
        if after is None or content_hash(Path(path)) != after:
            user_changed.add(path)
    for checkpoint in later:  # backups that failed, as the session recorded them
        for reason, path in map(parse_skip, checkpoint.skipped):
            if path not in earliest:
                undo_plan.keep.append((_shown(path, root), f"no backup: {reason}"))
    for path, (backup, original) in sorted(earliest.items()):
        shown = _shown(path, root)
        if original.too_large or original.failed:
            reason = f"no backup: {original.failed}" if original.failed else "too large, not kept"
            undo_plan.keep.append((shown, reason))
        elif _as_before(original, backup):
            continue
        elif path in user_changed and not force:
            undo_plan.keep.append((shown, USER_CHANGED))
        else:
            if path in user_changed:
                undo_plan.forced.append(shown)
            undo_plan.actions.append(Action(path, shown, original=original, backup=backup))
    return undo_plan


def _as_before(original: Original, backup: FileBackup) -> bool:
    now = content_hash(Path(original.path))
    return now == (backup.copy_hash(original) if original.existed else "")


def _shown(path: str, root: Path) -> str:
    candidate = Path(path)
    return str(candidate.relative_to(root)) if candidate.is_relative_to(root) else path
