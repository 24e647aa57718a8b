"""The chat loop driven in process through a pipe (no terminal), with a scripted model."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from di_code.agent import AgentEndEvent, AgentEvent
from di_code.ai import TextContent
from di_code.ai.providers.faux import Faux
from di_code.ai.types import UserMessage
from di_code.setup.prepared import Prepared
from di_code.ui.approval import ReplApprover
from di_code.ui.repl import Repl

TIMEOUT = 10


@contextmanager
def pipe() -> Iterator[PipeInput]:
    with create_pipe_input() as pipe_input, create_app_session(pipe_input, DummyOutput()):
        yield pipe_input


class Chat:
    def __init__(self, repl: Repl, pipe_input: PipeInput, console: Console) -> None:
        self.repl = repl
        self.input = pipe_input
        self.console = console
        self.ends: asyncio.Queue[AgentEndEvent] = asyncio.Queue()

    def on_event(self, event: AgentEvent) -> None:
        if isinstance(event, AgentEndEvent):
            self.ends.put_nowait(event)

    def type(self, text: str) -> None:
        self.input.send_text(text)

    async def answered(self) -> AgentEndEvent:
        return await asyncio.wait_for(self.ends.get(), TIMEOUT)

    @property
    def output(self) -> str:
        return self.console.file.getvalue()  # type: ignore[attr-defined]


@asynccontextmanager
async def chat(
    setup: Prepared,
    approver: ReplApprover | None = None,
    history: Path | None = None,
    width: int = 80,
    clock: Callable[[], float] = time.monotonic,
) -> AsyncIterator[Chat]:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    with pipe() as pipe_input:
        if approver is not None:
            approver.console = console
        repl = Repl(
            setup,
            console,
            input=pipe_input,
            output=DummyOutput(),
            history=history,
            approver=approver,
            clock=clock,
        )
        session = Chat(repl, pipe_input, console)
        setup.agent.subscribe(session.on_event)
        task = asyncio.create_task(repl.run())
        try:
            yield session
            assert await asyncio.wait_for(task, TIMEOUT) == 0
        finally:
            task.cancel()


async def until(condition: Callable[[], bool]) -> None:
    """Yield to the event loop until `condition` holds (the REPL prints from its own task)."""

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0)

    await asyncio.wait_for(poll(), TIMEOUT)


def text_reply(text: str) -> dict[str, Any]:
    return {"type": "success", "content": [TextContent(text)]}


def user_texts(faux: Faux, request: int) -> list[str]:
    return [
        block.text
        for message in faux.requests[request].messages
        if isinstance(message, UserMessage)
        for block in message.content
        if isinstance(block, TextContent)
    ]
