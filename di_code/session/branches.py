"""A session's branches, as `/tree` shows them: the entries' tree (each entry follows its
`parent_id`) cut at its branch points, each stretch between two of them one `Branch`.

A stretch is named by its first prompt, the one typed after the branch point. Moving to a
branch that ends (no branch point below it) continues the conversation at its last entry.

The file is untrusted: entries are resolved as `Session` resolves them (by id, the last entry
of an id winning), the walk is a loop, not a recursion (a chain 100,000 entries deep), and
entries no walk from the start reaches (a cycle, which only duplicate ids can make) are one
`SessionError`, never a hang.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from di_code.ai.types import AssistantMessage, UserMessage
from di_code.session.checkpoint_list import typed_title
from di_code.session.format import Entry, MessageEntry, SessionError


@dataclass(frozen=True, slots=True)
class Branch:
    """One stretch of the conversation between two branch points (or the start, or its end)."""

    title: str
    """The first line of its first prompt ("" when no prompt was typed on it yet)."""
    timestamp: int
    """When that prompt was sent (no prompt: when the stretch began), ms since the epoch."""
    prompts: int
    turns: int
    """The model's replies on it (a prompt takes one reply per tool round)."""
    last_id: str
    """Its last entry: where the conversation goes on once moved here."""
    depth: int
    """How many branch points are above it (the branches from the start: 1 if several)."""
    parent: int | None
    """The index of the branch it branches from (None: it starts the session)."""
    last: bool
    """The last of its branch point's branches (how the tree is drawn)."""
    ends: bool
    """No branch point below it: a conversation one can move to."""
    current: bool
    """The conversation is on it now."""


Start = tuple[str, int | None, int, bool]
"""A stretch to walk: its first entry's id, its parent branch, its depth, last of its kind."""


def branch_tree(entries: Sequence[Entry], current_id: str | None) -> list[Branch]:
    """The branches of `entries` in the order a tree is drawn (each before its branches, these
    in the order the file has them); `current_id`: the conversation's last entry."""
    by_id = {entry.id: entry for entry in entries}
    children: dict[str | None, list[str]] = {}
    for entry_id, entry in by_id.items():
        followed = entry.parent_id if entry.parent_id in by_id else None
        children.setdefault(followed, []).append(entry_id)
    roots = children.get(None, [])
    depth = 1 if len(roots) > 1 else 0
    todo: list[Start] = [(r, None, depth, i == 0) for i, r in enumerate(reversed(roots))]
    branches: list[Branch] = []
    reached = 0
    while todo:
        first, parent, depth, last = todo.pop()
        chain = [first]
        while len(kids := children.get(chain[-1], [])) == 1:
            chain.append(kids[0])
        reached += len(chain)
        index = len(branches)
        branches.append(_branch([by_id[i] for i in chain], current_id, depth, parent, last, kids))
        todo.extend((k, index, depth + 1, i == 0) for i, k in enumerate(reversed(kids)))
    if reached != len(by_id):
        raise SessionError(
            f"{len(by_id) - reached} of the session's entries follow each other in a circle "
            "(entries share an id): its branches cannot be shown"
        )
    return branches


def _branch(
    chain: list[Entry],
    current_id: str | None,
    depth: int,
    parent: int | None,
    last: bool,
    below: list[str],
) -> Branch:
    messages = [(e.timestamp, e.message) for e in chain if isinstance(e, MessageEntry)]
    prompts = [(when, m) for when, m in messages if isinstance(m, UserMessage)]
    turns = sum(1 for _, message in messages if isinstance(message, AssistantMessage))
    timestamp, title = chain[0].timestamp, ""
    if prompts:
        timestamp, title = prompts[0][0], typed_title(prompts[0][1])
    return Branch(
        title=title,
        timestamp=timestamp,
        prompts=len(prompts),
        turns=turns,
        last_id=chain[-1].id,
        depth=depth,
        parent=parent,
        last=last,
        ends=not below,
        current=any(entry.id == current_id for entry in chain),
    )
