"""The prompts' checkpoints as the session file records them: what `undo --list` shows and
what undo plans from (the recording itself is `checkpoints.Checkpointer`)."""

from __future__ import annotations

import itertools
import re
from typing import Literal

import msgspec
from msgspec.structs import replace

from di_code.ai.types import UserMessage
from di_code.session.format import CheckpointEntry, CheckpointPhase
from di_code.session.prompt_notes import split_notes
from di_code.session.session import Session

TITLE_LENGTH = 120
_VISIBLE = re.compile(r"\S")

Step = tuple[CheckpointPhase, str, tuple[str, ...], tuple[str, ...] | None]
"""(phase, tree or folder, skipped, paths) of one recorded snapshot of a prompt: `paths`, on
a tool-after, the only paths the tool calls could change (None: any)."""


class PromptCheckpoint(msgspec.Struct, frozen=True):
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
    steps: tuple[Step, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether a tool of this prompt changed a file (as far as the snapshots know)."""
        if self.after is None:
            return True  # the prompt never ended (a crash): assume it changed something
        if self.kind == "files":
            return self.after != ""  # "" marks a prompt whose tools touched no file
        pairs = itertools.pairwise(self.steps)
        tool = [(a, b) for a, b in pairs if (a[0], b[0]) in TOOL_INTERVALS]
        if any(a[1] != b[1] and (b[3] is None or b[3]) for a, b in tool):
            return True  # (a write outside the tree owns no change in it)
        from di_code.session.git_snapshot import CHANGED_BY_TOOL  # read back: only for undo

        lost = (p for phase, _, skips, _ in self.steps if phase == "tool-after" for p in skips)
        return any(CHANGED_BY_TOOL in entry for entry in lost)


TOOL_INTERVALS = {("tool-before", "tool-after"), ("before", "after")}
"""Snapshot pairs between which only tools ran (before/after alone: a session written before
tool calls were recorded, which had nothing finer)."""


def prompt_checkpoints(session: Session) -> list[PromptCheckpoint]:
    """Every prompt's checkpoint in the session file, oldest first, with undo marks."""
    found: dict[int, PromptCheckpoint] = {}
    for entry in session.entries:
        if not isinstance(entry, CheckpointEntry):
            continue
        current = found.get(entry.prompt)
        step: Step = (entry.phase, entry.ref, entry.skipped, entry.paths)
        if entry.phase == "before":
            found[entry.prompt] = PromptCheckpoint(
                entry.prompt, entry.title, entry.kind, entry.ref, None, entry.leaf_id,
                entry.timestamp, entry.skipped, steps=(step,),
            )  # fmt: skip
        elif entry.phase in ("tool-before", "tool-after", "after") and current is not None:
            found[entry.prompt] = replace(
                current,
                after=entry.ref if entry.phase == "after" else current.after,
                skipped=tuple(dict.fromkeys((*current.skipped, *entry.skipped))),
                steps=(*current.steps, step),
            )
        elif entry.phase == "undo":
            for number, checkpoint in found.items():
                if number >= entry.prompt:
                    found[number] = replace(checkpoint, undone=True)
    return [found[number] for number in sorted(found)]


def typed_title(message: UserMessage) -> str:
    """The first line of what the user typed, after the `!commands` whose output led it (the
    notes di-code put before it are not the user's), cut to TITLE_LENGTH. Only the start of
    the prompt is read: a prompt may be 100 MB piped in, and this runs on the event loop."""
    text = " ".join(part.text for part in message.content if hasattr(part, "text"))
    commands, typed = split_notes(text)
    start = _VISIBLE.search(typed)
    head = typed[start.start() : start.start() + 2 * TITLE_LENGTH] if start else ""
    title = (head.splitlines() or [""])[0].rstrip()
    if commands:
        title = " ".join([*(f"!{c}" for c in commands), title]).strip()
    return title[:TITLE_LENGTH]
