"""What a tool call's two snapshots tell undo it cannot cover (README, Undo): paths that
appeared but may have been there under an ignore rule the call changed, paths an ignore rule
hides now, and skipped or ignored paths the call changed. Named in the tool's record, so undo
keeps them and says why."""

from __future__ import annotations

from di_code.session.git_snapshot import (
    CHANGED_BY_TOOL,
    IGNORED_CHANGED,
    IGNORED_NOW,
    UNKNOWN_BEFORE,
    Snapshot,
    changed_watched,
    parse_skip,
    skip,
)


def uncovered(before: Snapshot, after: Snapshot, paths: tuple[str, ...] | None) -> tuple[str, ...]:
    """The skips a tool call's record adds to `after`'s own (`paths`: what it could change,
    None for any path)."""
    return (
        _changed_uncaptured(before, after, paths)
        + _not_proven_new(before, after)
        + _hidden_now(before, after)
    )


def _not_proven_new(before: Snapshot, after: Snapshot) -> tuple[str, ...]:
    """The paths that appeared over a tool call but may have been there, hidden by an ignore
    rule the call changed: undo must not take them for the tool's and delete them."""
    appeared = sorted(after.files - before.files)
    return tuple(skip(UNKNOWN_BEFORE, path) for path in appeared if not before.absent(path))


def _hidden_now(before: Snapshot, after: Snapshot) -> tuple[str, ...]:
    """The ignored paths that hide a path gone from the tree over a tool call (an ignore
    rule may have changed): what is under them is unknown, never restored over."""
    hiding = {after.hiding(path) for path in before.files - after.files}
    return tuple(skip(IGNORED_NOW, path) for path in sorted(hiding - {""}))


def _changed_uncaptured(
    before: Snapshot, after: Snapshot, paths: tuple[str, ...] | None
) -> tuple[str, ...]:
    """Skipped or ignored paths whose stat data a tool call changed (one of `paths` unless
    None): lost to undo, named."""
    reasons = {path: reason for reason, path in map(parse_skip, before.skipped + after.skipped)}
    changed = changed_watched(before.watched, after.watched)
    changed = [path for path in changed if paths is None or path in paths]
    return tuple(skip(_changed(reasons.get(p, IGNORED_CHANGED)), p) for p in changed)


def _changed(reason: str) -> str:
    return reason if CHANGED_BY_TOOL in reason else f"{reason}, {CHANGED_BY_TOOL}"
