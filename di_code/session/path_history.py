"""What happened to each path over a prompt's git snapshots, the ground undo plans on.

A path's history is the chain of its states, one per snapshot: its mode and blob, absent, or
*unknown* (that snapshot could not capture it, with the reason). Between two snapshots around
tool calls, what differs (or what the later snapshot saw a tool change) is the tools'.
Between any other two, what differs is the user's, and so is whatever may have changed
unseen (the path unknown on either side): a file the user made too large to capture is
never taken for a tool's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from di_code.session.checkpoint_list import TOOL_INTERVALS, Step
from di_code.session.git_snapshot import (
    CHANGED_BY_TOOL,
    IGNORED_NOW,
    UNKNOWN_BEFORE,
    GitSnapshots,
    parse_skip,
)

NO_UNTRACKED = "untracked, and that snapshot captured no untracked file"


@dataclass(frozen=True, slots=True)
class State:
    """A path in one snapshot: `mode` and `blob` (both None: absent), or `unknown` (why the
    snapshot could not capture it)."""

    mode: str | None = None
    blob: str | None = None
    unknown: str = ""


@dataclass(slots=True)
class PathHistory:
    path: str
    states: list[State]
    """One per snapshot, the prompt's start first, the work tree as it is now last."""
    by_tool: list[bool] = field(default_factory=list)
    """Per step between two states: a tool changed the path."""
    by_user: list[bool] = field(default_factory=list)
    """Per step between two states: the user changed it (or may have: it was unknown)."""

    @property
    def last_user_change(self) -> int:
        """The state the user's last change left (0, the prompt's start, when none)."""
        return max((n + 1 for n, user in enumerate(self.by_user) if user), default=0)

    def tool_changed_since(self, state: int) -> bool:
        return any(self.by_tool[state:])


def path_histories(git: GitSnapshots, chain: list[Step]) -> list[PathHistory]:
    """The history of every path some step of `chain` (snapshots, oldest first) changed as
    far as the trees show, sorted by path."""
    trees: dict[str, list[State]] = {}
    for number, (old, new) in enumerate(itertools.pairwise(chain)):
        for change in git.changes(old[1], new[1]):
            states = trees.setdefault(change.path, [State(change.old_mode, change.old_blob)])
            states += [states[-1]] * (number - len(states) + 1)  # unchanged until this step
            states.append(State(change.new_mode, change.new_blob))
    skips = [_Skips.of(step[2]) for step in chain]
    histories = []
    for path, states in sorted(trees.items()):
        states += [states[-1]] * (len(chain) - len(states))
        captured = [skip.captured(path, s) for s, skip in zip(states, skips, strict=True)]
        _hidden_before(path, captured, skips)
        history = PathHistory(path, captured)
        for number, (was, became) in enumerate(itertools.pairwise(captured)):
            before, after = chain[number], chain[number + 1]
            tools_only = (before[0], after[0]) in TOOL_INTERVALS
            tool_may = tools_only and (after[3] is None or path in after[3])
            seen = was != became or path in skips[number + 1].noticed
            unseen = bool(was.unknown or became.unknown)
            history.by_tool.append(tool_may and seen)
            history.by_user.append(not tool_may and (seen or unseen))
        histories.append(history)
    return histories


def _hidden_before(path: str, captured: list[State], skips: list[_Skips]) -> None:
    """A path that appeared while an ignore rule may have hidden it: unknown, not absent, in
    the snapshots before that showed it absent."""
    for number, skips_then in enumerate(skips):
        reason = skips_then.hidden.get(path)
        earlier = number - 1
        while reason and earlier >= 0 and captured[earlier] == State():  # absent, known
            captured[earlier] = State(unknown=reason)
            earlier -= 1


@dataclass(frozen=True, slots=True)
class _Skips:
    """One snapshot's `skipped` entries, by path."""

    uncaptured: dict[str, str]
    """path -> why the snapshot could not capture it ("": every untracked path)."""
    noticed: frozenset[str]
    """Paths the snapshot after a tool call saw the tool change, though not their bytes (a
    notice of that change, not of the capture)."""
    hidden: dict[str, str]
    """Paths this snapshot shows that an ignore rule may have hidden before (UNKNOWN_BEFORE):
    a notice about the snapshots before, not about this one."""
    ignored: frozenset[str]
    """Ignored paths (IGNORED_NOW): a path missing from the tree under one is unknown."""

    @classmethod
    def of(cls, skipped: Iterable[str]) -> _Skips:
        entries = [parse_skip(entry) for entry in skipped]
        noticed = frozenset(path for reason, path in entries if CHANGED_BY_TOOL in reason)
        hidden = {path: reason for reason, path in entries if reason == UNKNOWN_BEFORE}
        ignored = frozenset(path for reason, path in entries if reason == IGNORED_NOW)
        notices = (UNKNOWN_BEFORE, IGNORED_NOW)
        uncaptured = {
            path: reason
            for reason, path in entries
            if CHANGED_BY_TOOL not in reason and reason not in notices
        }
        return cls(uncaptured, noticed, hidden, ignored)

    def captured(self, path: str, state: State) -> State:
        """`state` as the tree shows it, or unknown when the snapshot skipped the path (or
        ignored it: missing from the tree, it may be there all the same)."""
        if path in self.uncaptured:
            return State(unknown=self.uncaptured[path])
        if state.mode is None and "" in self.uncaptured:
            return State(unknown=NO_UNTRACKED)
        if state.mode is None and self.ignored and self._ignores(path):
            return State(unknown=IGNORED_NOW)
        return state

    def _ignores(self, path: str) -> bool:
        parts = path.split("/")
        return any("/".join(parts[:n]) in self.ignored for n in range(1, len(parts) + 1))
