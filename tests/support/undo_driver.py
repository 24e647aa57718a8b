"""Drive a real Checkpointer through prompts and tool calls, as the agent loop does, over a
real work tree: a "tool" is any Python change made between its start and end events."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

from di_code.agent.events import (
    AgentEndEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
)
from di_code.ai.events import StartEvent
from di_code.ai.types import TextContent, ToolResultMessage, UserMessage
from di_code.session import Session, SessionStore
from di_code.session.checkpoints import Checkpointer
from di_code.session.undo_plan import UndoPlan, UndoResult, apply, plan
from tests.support.git import git

_ids = itertools.count(1)


def new_repo(folder: Path, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q", "-b", "main")
    for name, text in (files or {"a.txt": "a\n"}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "first")
    return folder


class Driver:
    """One session in `home` recording prompts in `work` (a git work tree or not)."""

    def __init__(self, home: Path, work: Path, **options: int) -> None:
        self.work = work
        self.session: Session = SessionStore(home).create(work)
        self.warnings: list[str] = []
        self.options = options
        self.checkpointer = Checkpointer(
            self.session, lambda raw: (work / raw).resolve(), on_warning=self.warnings.append,
            **options,
        )  # fmt: skip

    async def start(self, text: str = "do it") -> None:
        await self.checkpointer.on_event(AgentStartEvent())
        await self.checkpointer.on_event(MessageEndEvent(UserMessage.of(text)))
        await self.checkpointer.on_event(MessageUpdateEvent(StartEvent()))

    async def tool(
        self, change: Callable[[], object], name: str = "bash", path: str | None = None
    ) -> None:
        call_id = f"call{next(_ids)}"
        arguments = {"path": path} if path is not None else {"command": "x"}
        await self.checkpointer.on_event(ToolExecutionStartEvent(call_id, name, arguments))
        change()
        result = ToolResultMessage(call_id, name, [TextContent("ok")])
        await self.checkpointer.on_event(ToolExecutionEndEvent(call_id, name, result))

    async def end(self) -> None:
        await self.checkpointer.on_event(AgentEndEvent([]))

    async def prompt(self, *changes: Callable[[], object], text: str = "do it") -> None:
        await self.start(text)
        for change in changes:
            await self.tool(change)
        await self.end()

    def undo(self, *, force: bool = False, to: int | None = None) -> tuple[UndoPlan, UndoResult]:
        undo_plan = plan(self.session, force=force, to=to, **self.options)
        return undo_plan, apply(self.session, undo_plan)
