"""The chat REPL: a prompt-toolkit PromptSession on asyncio that stays open while the agent runs.

One task owns each prompt (or /compact, or a `!command`); the prompt keeps reading, so a line
typed meanwhile becomes a steering message (or, behind a `!command`, /compact or the trust
question, the next line run) and Ctrl-C aborts the run through the agent's signal. Output goes
into the scrollback above the prompt (di_code.ui.scrollback); what is still changing is drawn
in the prompt itself (`PromptLive`). Slash commands live in `di_code.ui.slash_commands`, keys in
`di_code.ui.keys`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console, RenderableType
from rich.text import Text

from di_code.agent.agent import Agent
from di_code.ai.codec import encodable
from di_code.ai.types import UserContent
from di_code.session import Session, prompt_with_compaction
from di_code.session.prompt_notes import with_notes
from di_code.setup.prepared import Prepared
from di_code.system.abort import AbortController
from di_code.system.first_use import import_off_loop
from di_code.system.safe_text import visible
from di_code.tools.builtin.support.attachments import AttachmentError, prompt_content
from di_code.tools.common.workspace import Workspace
from di_code.tools.policy.modes import PermissionMode
from di_code.tools.policy.permissions import NO
from di_code.ui.approval import ReplApprover
from di_code.ui.attention import Attention
from di_code.ui.footer import UsageTotals, bottom_line
from di_code.ui.jobs_command import carry_jobs, watch_jobs
from di_code.ui.list_picker import PickItem, pick
from di_code.ui.markdown_stream import ANSWER_DRAWING
from di_code.ui.mcp_watch import watch_mcp
from di_code.ui.pager import show_paged
from di_code.ui.pastes import Pastes
from di_code.ui.prompt_live import PromptLive, prompt_message
from di_code.ui.prompt_session import key_wait, make_prompt_session
from di_code.ui.reflow import Reflow
from di_code.ui.render import Renderer
from di_code.ui.replay import replay
from di_code.ui.scrollback import printing_above_the_prompt
from di_code.ui.slash_commands import run_command
from di_code.ui.tree_view import TreeChooser
from di_code.ui.turn_limit import more_turns_question

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.formatted_text import AnyFormattedText
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

    from di_code.config.trusting import TrustOffer


TICK_SECONDS = 0.1
"""Redraws while the agent works: 10 a second, so a spinner (12.5 frames/s) moves every tick."""
EXIT_ARMED_SECONDS = 2.0
"""How long "press Ctrl-C again to exit" holds."""
ERASE_ALL = "\x1b[2J\x1b[3J\x1b[H"
"""Erase the screen and the scrollback, cursor home."""
T = TypeVar("T")


class Repl:
    def __init__(
        self,
        setup: Prepared,
        console: Console,
        *,
        history: Path | None = None,
        input: Input | None = None,
        output: Output | None = None,
        approver: ReplApprover | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.setup = setup
        self.console = console
        self.live = PromptLive(console, self.invalidate)
        self.reflow = Reflow()
        self.renderer = Renderer(console, live=self.live, model=setup.agent.model, clock=clock)
        self.approver = approver or ReplApprover(console)
        self.approver.invalidate = self.invalidate
        self.approver.workspace = Workspace.create(setup.workspace)
        self.approver.screen_rows = self.screen_rows
        self.approver.show_all = self.show_paged
        self.attention = Attention(setup, console, self.approver)
        self.renderer.previewed = self.approver.previewed
        if setup.gate is not None and setup.gate.approver is not None:
            setup.gate.approver = self.renderer.pausing(setup.gate.approver)
            setup.gate.plan_reviewer = setup.gate.approver  # a plan's question is the chat's too
        self._armed_at: float | None = None
        self.pastes = Pastes()
        self.tree = TreeChooser(self.live.show, self.screen_rows)
        self.notes_for_model: list[str] = []
        """What the model has not seen yet (`!command` outputs, what /undo restored): it goes
        in front of the next prompt."""
        self._waiting: list[tuple[str, str]] = []
        """Lines typed while a `!command`, a compaction or the trust question was under way
        (as sent, as shown): submitted when it ends, or put back in the input if stopped."""
        self._next: asyncio.Task[bool] | None = None
        self._history = history
        self._io: dict[str, Any] = {"input": input, "output": output}
        self._session: PromptSession[str] | None = None
        self._task: asyncio.Task[None] | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._controller: AbortController | None = None
        self._unsubscribe = setup.agent.subscribe(self.renderer.handle)
        setup.agent.more_turns = more_turns_question(self.approver)

    @property
    def agent(self) -> Agent:
        return self.setup.agent

    @property
    def exit_armed(self) -> bool:
        """True within EXIT_ARMED_SECONDS of the first Ctrl-C on an empty prompt."""
        armed = self._armed_at
        return armed is not None and time.monotonic() - armed < EXIT_ARMED_SECONDS

    @exit_armed.setter
    def exit_armed(self, armed: bool) -> None:
        self._armed_at = time.monotonic() if armed else None

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
            options=old.options,
            budget=old.budget,
            hooks=old.hooks,
            prompt_hooks=old.prompt_hooks,
            offer=old.offer,
        )
        agent.more_turns = old.more_turns
        carry_jobs(self, old, agent, messages)
        self._unsubscribe()
        self._unsubscribe = agent.subscribe(self.renderer.handle)
        if session is not None:
            self.setup.attach_session(agent, session)
        self.setup.agent = agent
        if self.setup.session is not None and self.setup.session is not session:
            self.setup.session.release()  # the one writer of a session: let the old one go
        self.setup.session = session
        self.renderer.usage = UsageTotals()
        self.renderer.finished.clear()
        if messages:
            replay(self.renderer, messages, agent.tools)

    def switch_mode(self, mode: PermissionMode) -> None:
        """Shift+Tab and /permissions: the gate's new mode, and what it means for the user
        (a line such as "auto mode runs bash unsandboxed", once a session)."""
        gate = self.setup.gate
        if gate is None:
            return
        for note in gate.switch(mode):
            self.console.print(Text(f"! {visible(note)}", style="yellow"), soft_wrap=True)
        self.invalidate()

    def banner(self) -> Text:
        """The first line: the model and the folder, so a screenshot says where it ran."""
        model = self.agent.model
        home, folder = Path.home(), self.setup.workspace
        shown = f"~/{folder.relative_to(home)}" if folder.is_relative_to(home) else str(folder)
        text = Text.assemble(
            ("di-code chat", "bold"),
            " · ",
            (visible(f"{model.provider}/{model.id}"), "cyan"),
            " · ",
            (visible(shown), "cyan"),
        )
        text.append("\n/help for commands · Esc stops the agent · Ctrl-D quits", style="dim")
        return text

    def expand(self, number: int | None = None, *, thinking: bool = False) -> None:
        """Ctrl-O and /expand: the full output of a tool call (or a thinking block), paged
        when it is taller than the screen (the pager runs with the prompt suspended)."""
        renderer = self.renderer
        try:
            panel = renderer.thoughts.expanded(number) if thinking else renderer.expanded(number)
        except ValueError as exc:
            self.console.print(Text(f"✗ {visible(str(exc))}", style="red"))
            return
        self.show_paged(panel)

    def screen_rows(self) -> int:
        session = self._session
        if session is not None and session.app.is_running:
            return session.app.output.get_size().rows
        return self.console.height

    def show_paged(self, renderable: RenderableType) -> None:
        """Print `renderable`, or page it when it is taller than the screen (the pager runs
        with the prompt suspended)."""
        session = self._session
        show_paged(self.console, renderable, session.app if session is not None else None)

    async def pick(self, title: str, items: Sequence[PickItem[T]]) -> T | None:
        """One of `items` chosen in a list on the prompt's terminal (di_code.ui.list_picker),
        between two prompts; None when the user leaves it."""
        assert self._session is not None  # a command runs while the chat runs
        return await pick(title, items, self._session.app.input, self._session.app.output)

    def clear_screen(self) -> None:
        """/clear: the screen and the terminal's scrollback erased (as `clear` does), the
        banner again on top. Written where the console writes, so nothing printed before it
        comes after."""
        if self._session is not None:
            self.console.file.write(ERASE_ALL)
        self.console.print(self.banner())

    async def run(self) -> int:
        """Read and run prompts until /exit, Ctrl-D or Ctrl-C twice; the exit code is 0."""
        session = self._session = make_prompt_session(self, self._history, self._io)
        with printing_above_the_prompt():
            self.console.print(self.banner())
            if self.agent.transcript:
                replay(self.renderer, self.agent.transcript, self.agent.tools)
            if self.setup.trust_offer is not None:
                self.start(self._ask_trust(self.setup.trust_offer))
            watcher = self._watch()
            drawing = asyncio.create_task(import_off_loop(*ANSWER_DRAWING))  # while the user types
            try:
                while True:
                    try:
                        text = await session.prompt_async()
                    except EOFError:
                        break
                    if not await self.submit(text):
                        break
            finally:
                if watcher is not None:
                    watcher.cancel()
                drawing.cancel()
                await self.stop()
        return 0

    def _watch(self) -> asyncio.Task[None] | None:
        watch_jobs(self)  # a listener: the jobs that end are said as they end
        servers = self.setup.mcp
        return None if servers is None else asyncio.create_task(watch_mcp(self, servers))

    def status_line(self) -> str:
        return bottom_line(self.setup)

    async def submit(self, text: str) -> bool:
        """Handle one submitted line; False means quit."""
        self.exit_armed = False
        shown = encodable(text.strip())  # as the input showed it: a paste as its placeholder
        text = encodable(self.pastes.expand(text)).strip()  # where the typed prompt comes in: valid
        return await self._dispatch(text, shown) if text else True

    async def _dispatch(self, text: str, shown: str) -> bool:
        """A line's pastes expanded: a `!command`, a /command, steering, or a new prompt
        (echoed as `shown`)."""
        if text.startswith("!") and not self.busy:
            self.start(self._shell(text[1:].strip()))
            return True
        if text.startswith("/"):
            self.renderer.show_user(text)
            return await run_command(self, text)
        if self.busy and (text.startswith("!") or not self.agent.is_streaming):
            # nothing to steer: the line runs when the command, compaction or question ends
            self._waiting.append((text, shown))
            self.renderer.show_user(shown, queued=True)
            return True
        if self.busy:
            self.agent.steer(text)
            self.renderer.show_user(shown, queued=True)
            return True
        prompt = with_notes(self.notes_for_model, text)
        try:
            content = prompt_content(prompt, self.setup.workspace, self.agent.model)
        except AttachmentError as exc:  # refused before any request: the notes wait
            self.renderer.show_user(shown)
            self.console.print(Text(f"✗ {visible(str(exc))}", style="bold red"))
            return True
        self.notes_for_model = []
        self.renderer.echo_next = shown
        self.start(self._prompt(content))
        return True

    def start(self, work: Callable[[AbortController], Awaitable[None]]) -> None:
        """Run `work` as the one busy task; Ctrl-C aborts its controller."""
        controller = self._controller = AbortController()
        key_wait(self._session, working=True)
        self._task = asyncio.create_task(self._guard(work(controller)))
        self._ticker = asyncio.create_task(self._tick(self._task))

    def abort(self) -> None:
        if self.approver.pending is not None:
            self.approver.answer(NO)
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
        await self.attention.stop()  # and what the terminal was asked at the start

    def _prompt(
        self, content: str | list[UserContent]
    ) -> Callable[[AbortController], Awaitable[None]]:
        async def work(controller: AbortController) -> None:
            await prompt_with_compaction(
                self.agent, content, self.setup.session, signal=controller.signal
            )

        return work

    def _ask_trust(self, offer: TrustOffer) -> Callable[[AbortController], Awaitable[None]]:
        async def work(controller: AbortController) -> None:
            from di_code.ui.trust_question import ask_trust

            await ask_trust(self, offer)

        return work

    def _shell(self, command: str) -> Callable[[AbortController], Awaitable[None]]:
        async def work(controller: AbortController) -> None:
            from di_code.ui.shell import run_shell

            self.renderer.show_user(f"!{command}")
            where, signal = self.setup.workspace, controller.signal
            ran = await run_shell(command, where, signal, self.renderer, self.setup.hidden_env)
            if ran is not None:
                self.notes_for_model.append(ran)

        return work

    async def _guard(self, work: Awaitable[None]) -> None:
        """Errors of a prompt are one red line; the REPL goes on."""
        try:
            await work
        except Exception as exc:
            self.console.print(Text(f"✗ {visible(str(exc))}", style="bold red"))
        finally:
            stopped = self._controller is not None and self._controller.signal.aborted
            self._controller = None
            key_wait(self._session, working=False)
            self.invalidate()
            self.attention.turn_ended()
            if self._waiting and stopped:
                self._restore_waiting()
            elif self._waiting:  # once this task is done, so that the line does not wait again
                asyncio.get_running_loop().call_soon(self._submit_waiting)

    def _submit_waiting(self) -> None:
        self._next = asyncio.create_task(self._dispatch(*self._waiting.pop(0)))

    def _restore_waiting(self) -> None:
        """The user stopped the task: what was typed meanwhile starts nothing unasked, and is
        not lost either, but back in the input."""
        texts = "\n\n".join(text for text, _ in self._waiting)
        self._waiting = []
        if self._session is not None:
            self._session.default_buffer.insert_text(texts)
            self.console.print(Text("Stopped: the queued line is back in the input.", "dim"))

    async def _tick(self, task: asyncio.Task[None]) -> None:
        """Redraw the prompt while the task runs, so spinners and elapsed times move."""
        while not task.done():
            self.invalidate()
            await asyncio.wait([task], timeout=TICK_SECONDS)

    def prompt_message(self) -> AnyFormattedText:
        return prompt_message(self.approver, self.live, self.busy)
