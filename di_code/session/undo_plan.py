"""Undo: bring back the files a prompt's tools changed, and only those.

The rule: undo changes a file only when it can prove that the prompt's tools made the change
and nobody changed it since. So each path goes back to the state the user's last change left
(the prompt's start when none; with `force`, which is named per path, the prompt's start): a
path the user changed last is kept, and so is one whose state to go back to, or whose state
now, a snapshot could not capture (too large, a submodule, too many untracked files,
ignored, a failed backup), with the reason. `plan()` says all of that before anything is
written; `apply()` reports each restore that happened and each that failed, never one that
did not happen, and an undo it could not record (a full disk) as a failure.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from di_code.session.checkpoint_list import PromptCheckpoint, Step, prompt_checkpoints
from di_code.session.file_backup import FileBackup, Original, content_hash
from di_code.session.format import SessionError
from di_code.session.git_run import GitError
from di_code.session.git_snapshot import (
    CHANGED_BY_TOOL,
    DEFAULT_MAX_FILE_BYTES,
    IGNORED_NOW,
    NEVER_COVERED,
    GitSnapshots,
    parse_skip,
    skip,
)
from di_code.session.path_history import NO_UNTRACKED, PathHistory, path_histories
from di_code.session.safe_files import (
    has_other_names,
    is_real,
    read_file,
    remove_empty_folders,
    remove_file,
    write_file,
    write_symlink,
)
from di_code.session.session import Session
from di_code.session.snapshot_places import backup_folder, git_snapshots
from di_code.system.errors import DiCodeError

USER_CHANGED = "changed by you since the tool did"
FORCED = "changed by you since the tool did, overwritten (--force)"


class NothingToUndo(DiCodeError):
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
    yours: list[str] = field(default_factory=list)
    """Paths that go back to what the user's last change left there (a tool changed them
    after it), not to what they were before the prompt."""
    top: Path = Path("/")
    git: GitSnapshots | None = None

    @property
    def restores(self) -> list[str]:
        return [a.shown for a in self.actions if not a.deletes]

    @property
    def deletes(self) -> list[str]:
        return [a.shown for a in self.actions if a.deletes]

    @property
    def uncovered(self) -> list[str]:
        """The paths whose changes undo cannot see (nested repositories, submodules): an
        undo of this prompt is never reported whole without naming them."""
        return [path for path, reason in self.keep if reason in NEVER_COVERED]

    def undid(self) -> str:
        """The sentence that ends a whole undo, naming what it could not cover."""
        if self.uncovered:
            return (f"Undid prompt {self.target.number}, except what undo cannot cover: "
                    f"{', '.join(map(in_line, self.uncovered))}.")  # fmt: skip
        return f"Undid prompt {self.target.number}."

    def lines(self) -> list[str]:
        """The plan: restore N, delete M, keep K, each path with its reason."""
        n, m, k = len(self.restores), len(self.deletes), len(self.keep)
        out = [f"undo prompt {self.target.number} ({self.target.title}): "
               f"restore {n}, delete {m}, keep {k}"]  # fmt: skip
        out += [f"  restore {in_line(p)}{self._note(p)}" for p in self.restores]
        out += [f"  delete {in_line(p)}{self._note(p)}" for p in self.deletes]
        out += [
            f"  keep {in_line(path) or 'untracked files'}: {reason}" for path, reason in self.keep
        ]
        return out

    def _note(self, shown: str) -> str:
        if shown in self.forced:
            return "  (--force)"
        return "  (as you left it)" if shown in self.yours else ""


@dataclass(slots=True)
class UndoResult:
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    on_disk: list[Path] = field(default_factory=list)
    """The files undo changed on disk itself (not through `write_text`): an editor that has
    one open must reload it."""


TextWriter = Callable[[Path, str], bool]
"""Puts a restored text file where the user edits it (an editor's buffer, which the editor
saves); False when that path is not the editor's to write (undo writes the disk then)."""


def plan(
    session: Session,
    *,
    to: int | None = None,
    force: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> UndoPlan:
    """What undoing prompt `to` (default: the newest prompt that changed something and is not
    undone) and every later prompt would do; `max_file_bytes` as the prompts' snapshots had
    it. Raises NothingToUndo."""
    checkpoints = [c for c in prompt_checkpoints(session) if not c.undone]
    target = _target(checkpoints, to)
    later = [c for c in checkpoints if c.number >= target.number]
    if target.kind == "files":
        return _plan_files(session, target, later, force)
    git = git_snapshots(session, max_file_bytes)
    if git is None:
        raise NothingToUndo("this checkpoint was taken in a git work tree that is gone")
    try:
        return _plan_git(git, target, later, force)
    except (GitError, OSError) as exc:  # one line, as every reason not to undo
        raise NothingToUndo(f"the snapshots could not be read: {exc}") from None


def apply(
    session: Session, undo_plan: UndoPlan, write_text: TextWriter | None = None
) -> UndoResult:
    """Carry the plan out, a restored text file through `write_text` when given; the prompt
    is marked undone only when every action succeeded."""
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
            by_editor = _carry_out(action, undo_plan.top, blobs, write_text)
        except OSError as exc:
            result.failed.append(
                f"could not restore {in_line(action.shown)}: {exc.strerror or exc}"
            )
            continue
        result.done.append(f"{verb} {in_line(action.shown)}")
        if not by_editor:
            result.on_disk.append(undo_plan.top / action.path)
    if undo_plan.actions and not result.failed:
        target = undo_plan.target
        try:
            session.append_checkpoint(target.number, "undo", target.kind, target.before)
        except SessionError as exc:  # a full disk: the files are back, the session cannot say so
            result.failed.append(f"the undo could not be recorded: {exc}")
    return result


def _carry_out(
    action: Action, top: Path, blobs: dict[str, bytes], write_text: TextWriter | None
) -> bool:
    """Write one action; True when `write_text` took the file."""
    path = top / action.path
    if action.deletes:
        remove_file(path)
        remove_empty_folders(path, top)
        return False
    if action.mode == "120000":
        write_symlink(path, blobs[action.blob or ""].decode(errors="surrogateescape"))
        return False
    if action.original is not None and action.backup is not None:
        data, mode = action.backup.kept(action.original)
    else:
        data, mode = blobs[action.blob or ""], _permissions(path, action.mode or "")
    if write_text is not None and _written_as_text(write_text, path, data, mode):
        return True
    write_file(path, data, mode)
    return False


def _written_as_text(write_text: TextWriter, path: Path, data: bytes, mode: int) -> bool:
    """Whether `write_text` put `data` at `path`, byte for byte and with `mode`. An editor
    may keep the text unsaved, change its line ends or make the file with its own mode: undo
    then writes the disk itself, so a restore is byte-exact whoever writes it. A path with a
    link in it, or a file with another name (a hard link), is never handed over: the editor
    would write where the link points, or every name of the file."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if not is_real(path) or has_other_names(path):
        return False
    if not write_text(path, text):
        return False
    try:
        now, status = read_file(path, len(data))
    except OSError:
        return False
    return now == data and stat.S_IMODE(status.st_mode) == mode


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


def _plan_git(
    git: GitSnapshots, target: PromptCheckpoint, later: list[PromptCheckpoint], force: bool
) -> UndoPlan:
    now = git.take()
    chain: list[Step] = [step for checkpoint in later for step in checkpoint.steps]
    hidden = tuple(skip(IGNORED_NOW, path) for path in now.ignored or ())  # not recorded
    chain.append(("tool-before", now.tree, now.skipped + hidden, None))  # now: the user's
    undo_plan = UndoPlan(target, top=git.top, git=git)
    for history in path_histories(git, chain):
        _plan_path(undo_plan, history, force)
    named = {action.path for action in undo_plan.actions} | {path for path, _ in undo_plan.keep}
    undo_plan.keep += _uncaptured(chain, named)
    return undo_plan


def _plan_path(undo_plan: UndoPlan, history: PathHistory, force: bool) -> None:
    """Back to the state the user's last change left (the prompt's start when none), so
    only what tools changed after it is undone; `force` goes back to the prompt's start.
    Never to or over an unknown state."""
    path, states = history.path, history.states
    if not any(history.by_tool):
        return  # only the user changed it
    mine = history.last_user_change
    forced = force and not states[0].unknown and states[0] != states[mine]
    back, now = states[0 if forced else mine], states[-1]
    if not forced and not history.tool_changed_since(mine):  # the user's change is the last
        if now != states[0]:
            _keep(undo_plan, path, now.unknown or USER_CHANGED)
    elif now.unknown or back.unknown:
        _keep(undo_plan, path, now.unknown or back.unknown)
    elif back != now:
        if forced:
            undo_plan.forced.append(path)
        elif mine:
            undo_plan.yours.append(path)
        undo_plan.actions.append(Action(path, path, back.mode, back.blob))


def _keep(undo_plan: UndoPlan, path: str, reason: str) -> None:
    if reason != NO_UNTRACKED:  # those are all named at once, as "untracked files"
        undo_plan.keep.append((path, reason))


def _uncaptured(chain: list[Step], named: set[str]) -> list[tuple[str, str]]:
    """What the snapshots could not capture at all: changes a tool made to skipped or ignored
    paths, submodules, every untracked file when there were too many."""
    found: dict[str, str] = {}
    for phase, _, skipped, _ in chain:
        for reason, path in map(parse_skip, skipped):
            by_tool = phase == "tool-after" and CHANGED_BY_TOOL in reason
            if by_tool or path == "" or reason in NEVER_COVERED:
                found.setdefault(path, reason)
    return sorted((path, reason) for path, reason in found.items() if path not in named)


def _plan_files(
    session: Session, target: PromptCheckpoint, later: list[PromptCheckpoint], force: bool
) -> UndoPlan:
    root = Path(session.cwd)
    undo_plan = UndoPlan(target, top=root.resolve())
    chains: dict[str, list[tuple[FileBackup, Original]]] = {}
    for checkpoint in later:
        backup = FileBackup(backup_folder(session, checkpoint.before), DEFAULT_MAX_FILE_BYTES)
        for original in backup.originals:
            chains.setdefault(original.path, []).append((backup, original))
    for checkpoint in later:  # backups that failed, as the session recorded them
        for reason, path in map(parse_skip, checkpoint.skipped):
            if path not in chains:
                undo_plan.keep.append((_shown(path, root), f"no backup: {reason}"))
    for path, chain in sorted(chains.items()):
        _plan_file(undo_plan, _shown(path, root), chain, force)
    return undo_plan


def _plan_file(
    undo_plan: UndoPlan, shown: str, chain: list[tuple[FileBackup, Original]], force: bool
) -> None:
    """As in git, back to what the user's last change left: here the original a later
    prompt kept when the user changed the file between prompts. A change of the user's
    between two tool calls of one prompt is not kept (only originals are), so the file is."""
    mine, unkept = 0, False
    for number, (backup, original) in enumerate(chain):
        if number and _kept_hash(backup, original) != chain[number - 1][1].after_hash:
            mine, unkept = number, False
        unkept = unkept or original.user_changed
    last = chain[-1][1]
    users_last = unkept or last.after_hash != content_hash(Path(last.path))
    first_kept = _restorable(chain[0][1])
    forced = force and first_kept and (users_last or mine > 0)
    backup, original = chain[0 if forced else mine]
    if first_kept and _as_before(*chain[0]):
        return  # as it was before the prompt
    if users_last and not forced:
        undo_plan.keep.append((shown, USER_CHANGED))
    elif not _restorable(original):
        reason = f"no backup: {original.failed}" if original.failed else "too large, not kept"
        undo_plan.keep.append((shown, reason))
    elif not _as_before(backup, original):
        if forced:
            undo_plan.forced.append(shown)
        elif mine:
            undo_plan.yours.append(shown)
        undo_plan.actions.append(Action(original.path, shown, original=original, backup=backup))


def _restorable(original: Original) -> bool:
    return not (original.too_large or original.failed)


def _kept_hash(backup: FileBackup, original: Original) -> str | None:
    """sha256 of the file as this original kept it ("": absent), None when not kept."""
    if not original.existed:
        return ""
    return backup.copy_hash(original) if original.copy else None


def _as_before(backup: FileBackup, original: Original) -> bool:
    now = content_hash(Path(original.path))
    return now == (backup.copy_hash(original) if original.existed else "")


def in_line(path: str) -> str:
    """`path` as a line of a plan or a report shows it: a line break in a name (Linux allows
    one) is shown as `␊`, so no name prints a line of its own (`x\ndeleted .env`) in what the
    user answers y/N to or reads as done."""
    return path.replace("\n", "\u240a")


def _shown(path: str, root: Path) -> str:
    candidate = Path(path)
    return str(candidate.relative_to(root)) if candidate.is_relative_to(root) else path
