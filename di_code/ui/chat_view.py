"""What the chat's parts see of it: `ChatView`, what the REPL offers its keys, commands and
watchers (what the CLI hands the REPL is a `di_code.setup.prepared.Prepared`). The parts are
typed against it, not against the REPL itself, so the REPL can import them without an import
circle."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import AnyFormattedText
    from rich.console import Console

    from di_code.agent.agent import Agent
    from di_code.session import Session
    from di_code.setup.prepared import Prepared
    from di_code.system.abort import AbortController
    from di_code.tools.policy.modes import PermissionMode
    from di_code.ui.approval import ReplApprover
    from di_code.ui.attention import Attention
    from di_code.ui.list_picker import PickItem
    from di_code.ui.pastes import Pastes
    from di_code.ui.reflow import Reflow
    from di_code.ui.render import Renderer
    from di_code.ui.tree_view import TreeChooser

T = TypeVar("T")


class ChatView(Protocol):
    """The running chat (ui.repl.Repl is the one there is)."""

    setup: Prepared
    console: Console
    renderer: Renderer
    approver: ReplApprover
    attention: Attention
    reflow: Reflow
    pastes: Pastes
    tree: TreeChooser
    notes_for_model: list[str]
    """Said to the model before the next prompt (a `!command`'s output, an undo)."""

    @property
    def agent(self) -> Agent: ...
    @property
    def busy(self) -> bool: ...
    @property
    def exit_armed(self) -> bool: ...
    @exit_armed.setter
    def exit_armed(self, armed: bool) -> None: ...
    def invalidate(self) -> None: ...
    def abort(self) -> None: ...
    def start(self, work: Callable[[AbortController], Awaitable[None]]) -> None: ...
    def replace_agent(self, messages: list[Any], session: Session | None) -> None: ...
    def switch_mode(self, mode: PermissionMode) -> None: ...
    def expand(self, number: int | None = None, *, thinking: bool = False) -> None: ...
    def clear_screen(self) -> None: ...
    def status_line(self) -> str: ...
    def prompt_message(self) -> AnyFormattedText: ...
    async def submit(self, text: str) -> bool: ...
    async def pick(self, title: str, items: Sequence[PickItem[T]]) -> T | None: ...
