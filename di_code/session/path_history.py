"""What happened to each path over a prompt's git snapshots, the ground undo plans on.

A path's history is the chain of its states, one per snapshot: its mode and blob, absent, or
*unknown* (that snapshot could not capture it, with the reason). Between two snapshots either
only tools ran (what changed there is the tools') or they did not (what changed is the
user's). A change the snapshots cannot see, because the path is unknown on one side, counts
as the user's unless the snapshot after a tool call noticed the tool change it: so a file the
user made too large to capture is never taken for the tool's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from di_code.session.checkpoint_list import TOOL_INTERVALS, Step
from di_code.session.git_snapshot import CHANGED_BY_TOOL, GitSnapshots, parse_skip

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
    histories = []
    for path, states in sorted(trees.items()):
        states += [states[-1]] * (len(chain) - len(states))
        captured = [_as_captured(path, s, step) for s, step in zip(states, chain, strict=True)]
        history = PathHistory(path, captured)
        for (was, became), (before, after) in zip(
            itertools.pairwise(captured), itertools.pairwise(chain), strict=True
        ):
            tools_only = (before[0], after[0]) in TOOL_INTERVALS
            tool_may = tools_only and (after[3] is None or path in after[3])
            seen = was != became or _noticed(path, after[2])
            unseen = bool(was.unknown or became.unknown)
            history.by_tool.append(tool_may and seen)
            history.by_user.append(not tool_may and (seen or unseen))
        histories.append(history)
    return histories


def _as_captured(path: str, state: State, step: Step) -> State:
    """`state` as the tree shows it, or unknown when the step's snapshot skipped the path
    (an entry saying a tool changed it is a notice of that change, not of the capture)."""
    skipped = [parse_skip(entry) for entry in step[2] if CHANGED_BY_TOOL not in entry]
    for reason, skipped_path in skipped:
        if skipped_path == path:
            return State(unknown=reason)
    if state.mode is None and any(skipped_path == "" for _, skipped_path in skipped):
        return State(unknown=NO_UNTRACKED)
    return state


def _noticed(path: str, skipped: Iterable[str]) -> bool:
    """Whether a snapshot after a tool call saw the tool change `path` though it could not
    capture its bytes."""
    return any(p == path and CHANGED_BY_TOOL in reason for reason, p in map(parse_skip, skipped))
