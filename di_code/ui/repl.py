"""The chat REPL: a prompt-toolkit PromptSession on asyncio that stays open while the agent runs.

One task owns each prompt (or /compact); the prompt keeps reading, so a line typed meanwhile
becomes a steering message and Ctrl-C aborts the run through the agent's signal. Output goes
through `patch_stdout` into the scrollback above the prompt; what is still changing is drawn
in the prompt itself (`PromptLive`). Slash commands live in `di_code.ui.commands`, keys in
`di_code.ui.keys`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from di_code.agent.agent import Agent
from di_code.ai.abort import AbortController
from di_code.ai.stream import Provider
from di_code.ai.types import Model
from di_code.session import Session, SessionStore, prompt_with_compaction
from di_code.tools.permissions import PermissionGate
from di_code.ui.approval import QUESTION, ReplApprover
from di_code.ui.footer import UsageTotals
from di_code.ui.prompt_live import PromptLive
from di_code.ui.render import Renderer

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.formatted_text import AnyFormattedText
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

SwitchModel = Callable[[str], tuple[Provider, Model]]
TICK_SECONDS = 0.1


@dataclass(slots=True)
class ChatSetup:
    """What the CLI hands the REPL. `store` is None with --no-session."""

    agent: Agent
    session: Session | None = None
    store: SessionStore | None = None
    gate: PermissionGate | None = None
    workspace: Path = field(default_factory=Path.cwd)
    switch_model: SwitchModel | None = None
    """Resolves `provider/id` for /model; raises ConfigError with a one-line message."""
    attach_session: Callable[[Agent, Session], object] = lambda agent, s: s.record(agent)
    """Records the agent's messages (and checkpoints) in a session."""


class Repl:
    def __init__(
        self,
        setup: ChatSetup,
        console: Console,
        *,
        history: Path | None = None,
        input: Input | None = None,
        output: Output | None = None,
        approver: ReplApprover | None = None,
    ) -> None:
        self.setup = setup
        self.console = console
        self.live = PromptLive(console, self.invalidate)
        self.renderer = Renderer(console, live=self.live, model=setup.agent.model)
        self.approver = approver or ReplApprover(console)
        self.approver.invalidate = self.invalidate
        self.exit_armed = False
        self._history = history
        self._io: dict[str, Any] = {"input": input, "output": output}
        self._session: PromptSession[str] | None = None
        self._task: asyncio.Task[None] | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._controller: AbortController | None = None
        self._unsubscribe = setup.agent.subscribe(self.renderer.handle)

    @property
    def agent(self) -> Agent:
        return self.setup.agent

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    def invalidate(self) -> None:
        session = self._session
        if session is not None and session.app.is_running:
            session.app.invalidate()

    def replace_agent(self, messages: list[Any], session: Session | None) -> None:
        """Start over with these messages and this session (/clear, /resume)."""
        old = self.setup.agent
        agent = Agent(
            old.provider,
            old.model,
            old.tools,
            old.system_prompt,
            messages=messages,
            max_turns=old.max_turns,
            options=old.options,
        )
        self._unsubscribe()
        self._unsubscribe = agent.subscribe(self.renderer.handle)
        if session is not None:
            self.setup.attach_session(agent, session)
        self.setup.agent = agent
        self.setup.session = session
        self.renderer.usage = UsageTotals()

    async def run(self) -> int:
        """Read and run prompts until /exit, Ctrl-D or Ctrl-C twice; the exit code is 0."""
        from prompt_toolkit.patch_stdout import patch_stdout

        session = self._session = self._make_session()
        with patch_stdout(raw=True):
            self.console.print(Text("di-code chat · /help for commands · Ctrl-D to quit", "dim"))
            try:
                while True:
                    try:
                        text = await session.prompt_async()
                    except EOFError:
                        break
                    if not await self.submit(text):
                        break
            finally:
                await self.stop()
        return 0

    async def submit(self, text: str) -> bool:
        """Handle one submitted line; False means quit."""
        from di_code.ui.commands import run_command

        self.exit_armed = False
        text = text.strip()
        if not text:
            return True
        if text.startswith("/"):
            self.renderer.show_user(text)
            return await run_command(self, text)
        if self.busy and not self.agent.is_streaming:
            self.console.print(Text("Wait a moment: the conversation is being compacted.", "dim"))
            return True
        if self.busy:
            self.agent.steer(text)
            self.renderer.show_user(text, queued=True)
            return True
        self.start(self._prompt(text))
        return True

    def start(self, work: Callable[[AbortController], Awaitable[None]]) -> None:
        """Run `work` as the one busy task; Ctrl-C aborts its controller."""
        controller = self._controller = AbortController()
        self._task = asyncio.create_task(self._guard(work(controller)))
        self._ticker = asyncio.create_task(self._tick(self._task))

    def abort(self) -> None:
        if self.approver.pending is not None:
            self.approver.answer("no")
        if self._controller is not None:
            self._controller.abort()
        self.agent.abort()

    async def wait_idle(self) -> None:
        if self._task is not None:
            await asyncio.shield(self._task)

    async def stop(self) -> None:
        if self.busy:
            self.abort()
            await self.wait_idle()

    def _prompt(self, text: str) -> Callable[[AbortController], Awaitable[None]]:
        async def work(controller: AbortController) -> None:
            from di_code.tools.attachments import prompt_content

            content = prompt_content(text, self.setup.workspace, self.agent.model)
            await prompt_with_compaction(
                self.agent, content, self.setup.session, signal=controller.signal
            )

        return work

    async def _guard(self, work: Awaitable[None]) -> None:
        """Errors of a prompt are one red line; the REPL goes on."""
        try:
            await work
        except Exception as exc:
            self.console.print(Text(f"✗ {exc}", style="bold red"))
        finally:
            self._controller = None
            self.invalidate()

    async def _tick(self, task: asyncio.Task[None]) -> None:
        """Redraw the prompt while the task runs, so spinners and elapsed times move."""
        while not task.done():
            self.invalidate()
            await asyncio.wait([task], timeout=TICK_SECONDS)

    def _message(self) -> AnyFormattedText:
        from prompt_toolkit.application import get_app
        from prompt_toolkit.formatted_text import ANSI

        size = get_app().output.get_size()
        live = self.live.render(size.columns, size.rows)
        if self.approver.pending is not None:
            return ANSI(f"{live}\x1b[1;33m{QUESTION}\x1b[0m ")
        symbol = "\x1b[2m…\x1b[0m " if self.busy else ""
        return ANSI(f"{live}{symbol}\x1b[1;36m›\x1b[0m ")

    def _make_session(self) -> PromptSession[str]:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory

        from di_code.ui.completion import ChatCompleter
        from di_code.ui.keys import key_bindings

        history = InMemoryHistory() if self._history is None else FileHistory(self._history)
        return PromptSession(
            self._message,
            history=history,
            completer=ChatCompleter(self.setup.workspace),
            complete_while_typing=True,
            key_bindings=key_bindings(self),
            erase_when_done=True,
            **self._io,
        )
