"""A list to choose one line from, drawn under the chat's scrollback while the prompt waits:
arrow keys (and Ctrl-P/Ctrl-N, PageUp/PageDown) move, typing filters, Enter chooses, Esc or
Ctrl-C leaves with nothing chosen. `/model` and `/resume` without an argument use it.

It runs as a prompt-toolkit application of its own on the chat's terminal between two prompts
(a command that opens it waits until the agent is idle), so its keys never reach the prompt and
it leaves nothing on the screen when it closes. Every line goes through `visible()`: a label
may come from a session file or a server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from di_code.system.safe_text import visible
from di_code.ui.inline_output import drawn_on

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.input import Input
    from prompt_toolkit.key_binding import KeyPressEvent
    from prompt_toolkit.output import Output

T = TypeVar("T")

VISIBLE_ROWS = 10
"""Lines shown at once; the list scrolls to keep the selected one in view."""
CURRENT_MARK = "*"
"""In front of the item that is in use now (the current model)."""
ESCAPE_WAIT_SECONDS = 0.05
"""As the prompt's (di_code.ui.prompt_session): a lone Esc closes the list at once."""


@dataclass(frozen=True, slots=True)
class PickItem(Generic[T]):
    """One line: `label` then, dim, `detail`; `value` is what choosing it returns."""

    label: str
    value: T
    detail: str = ""
    current: bool = False


def matching(items: Sequence[PickItem[T]], query: str) -> list[int]:
    """The positions of the items that hold every word of `query` (any case, any order) in
    their label or detail; all of them for an empty query."""
    words = query.casefold().split()
    return [
        index
        for index, item in enumerate(items)
        if all(word in f"{item.label} {item.detail}".casefold() for word in words)
    ]


class ListPicker(Generic[T]):
    """The state of one open list: the filter typed so far, the lines it leaves, the selected
    one. Pure, so filtering and moving are tested without a terminal."""

    def __init__(self, items: Sequence[PickItem[T]], rows: int = VISIBLE_ROWS) -> None:
        self.items = list(items)
        self.rows = rows
        self.shown = matching(self.items, "")
        self.selected = next((n for n, item in enumerate(self.items) if item.current), 0)
        self.top = max(0, self.selected - rows + 1)

    def filter(self, query: str) -> None:
        """Keep the selected item selected while it still matches, else the first match."""
        chosen = self.chosen_index()
        self.shown = matching(self.items, query)
        self.selected = self.shown.index(chosen) if chosen in self.shown else 0
        self.top = 0
        self._scroll()

    def move(self, by: int) -> None:
        if self.shown:
            self.selected = max(0, min(len(self.shown) - 1, self.selected + by))
            self._scroll()

    def chosen_index(self) -> int | None:
        return self.shown[self.selected] if self.shown else None

    def chosen(self) -> PickItem[T] | None:
        index = self.chosen_index()
        return None if index is None else self.items[index]

    def lines(self) -> list[tuple[bool, PickItem[T]]]:
        """The items in view, each with whether it is the selected one."""
        view = self.shown[self.top : self.top + self.rows]
        return [(self.top + n == self.selected, self.items[i]) for n, i in enumerate(view)]

    def _scroll(self) -> None:
        if self.selected < self.top:
            self.top = self.selected
        elif self.selected >= self.top + self.rows:
            self.top = self.selected - self.rows + 1


async def pick(
    title: str,
    items: Sequence[PickItem[T]],
    input: Input | None = None,
    output: Output | None = None,
) -> T | None:
    """The value of the line the user chose, None if they left (Esc, Ctrl-C, nothing listed)."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
    from prompt_toolkit.layout.processors import BeforeInput

    state = ListPicker(items)
    query = Buffer(multiline=False, on_text_changed=lambda buffer: state.filter(buffer.text))
    keys = KeyBindings()
    app: Application[T | None] = Application(
        layout=Layout(
            HSplit(
                [
                    Window(FormattedTextControl(lambda: _heading(title, state)), height=1),
                    Window(
                        BufferControl(query, input_processors=[BeforeInput("filter› ")]), height=1
                    ),
                    Window(FormattedTextControl(lambda: _rows(state)), dont_extend_height=True),
                ]
            ),
            focused_element=query,
        ),
        key_bindings=keys,
        erase_when_done=True,
        input=input,
        output=output,
    )
    app.ttimeoutlen = ESCAPE_WAIT_SECONDS
    app.timeoutlen = ESCAPE_WAIT_SECONDS
    drawn_on(app)

    for key, by in (("up", -1), ("c-p", -1), ("down", 1), ("c-n", 1)):
        keys.add(key)(lambda event, by=by: state.move(by))
    keys.add("pageup")(lambda event: state.move(-state.rows))
    keys.add("pagedown")(lambda event: state.move(state.rows))

    @keys.add("enter")
    def _choose(event: KeyPressEvent) -> None:
        chosen = state.chosen()
        event.app.exit(result=None if chosen is None else chosen.value)

    @keys.add("escape")
    @keys.add("c-c")
    def _leave(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    return await app.run_async()


def one_line(text: str) -> str:
    """`text` made visible, its line breaks and runs of spaces one space: a line of the list."""
    return " ".join(visible(text).split())


def _heading(title: str, state: ListPicker[T]) -> StyleAndTextTuples:
    count = f"{len(state.shown)}/{len(state.items)}"
    return [
        ("bold", one_line(title)),
        ("", f"  {count} · ↑↓ move · Enter chooses · Esc leaves"),
    ]


def _rows(state: ListPicker[T]) -> StyleAndTextTuples:
    if not state.shown:
        return [("italic", "  nothing matches")]
    out: StyleAndTextTuples = []
    for selected, item in state.lines():
        arrow = "›" if selected else " "
        mark = CURRENT_MARK if item.current else " "
        style = "reverse" if selected else ""
        out.append((style, f"{arrow}{mark} {one_line(item.label)}"))
        if item.detail:
            out.append(("" if selected else "fg:ansibrightblack", f"  {one_line(item.detail)}"))
        out.append(("", "\n"))
    out.pop()
    return out
