"""Streaming Markdown prints each finished block once and ends equal to the whole render."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console, RenderableType

from di_code.ui.markdown_stream import (
    CODE_THEME,
    LiveTail,
    MarkdownStream,
    block_starts,
    live_text,
    markdown,
)
from tests.support.clock import ManualClock


def make_console(width: int = 80) -> Console:
    return Console(file=io.StringIO(), width=width, color_system=None)


def whole(text: str, width: int = 80) -> str:
    console = make_console(width)
    console.print(markdown(text))
    return console.file.getvalue()  # type: ignore[attr-defined]


class RecordingLive:
    def __init__(self) -> None:
        self.shown: list[RenderableType | None] = []

    def show(self, renderable: RenderableType | None) -> None:
        self.shown.append(renderable)


def stream(
    text: str, cuts: list[int], clock: ManualClock | None = None
) -> tuple[str, MarkdownStream]:
    console = make_console()
    md = MarkdownStream(console, clock=clock or ManualClock(), live=RecordingLive())
    previous = 0
    for cut in [*sorted({c for c in cuts if 0 < c < len(text)}), len(text)]:
        md.append(text[previous:cut])
        previous = cut
        if clock is not None:
            clock.now += 1.0
    md.finish()
    return console.file.getvalue(), md  # type: ignore[attr-defined]


SAMPLE = (
    "# Title\n\nSome *text* with `code`.\n\n```python\ndef f():\n\n    return 1\n```\n\n"
    "- one\n\n- two\n  continued\n\n1. a\n2. b\n\n> quote\n\n---\n\n| a | b |\n|---|---|\n"
    "| 1 | 2 |\n\n    indented\n\n    code\n\nSetext\n======\n\nend"
)


def test_finished_blocks_are_printed_before_the_reply_ends() -> None:
    clock = ManualClock()
    console = make_console()
    live = RecordingLive()
    md = MarkdownStream(console, clock=clock, live=live)
    md.append("First paragraph.\n\n")
    assert console.file.getvalue() == ""  # type: ignore[attr-defined]
    clock.now = 1.0
    md.append("Sec")
    assert console.file.getvalue() == "First paragraph.".ljust(80) + "\n"  # type: ignore[attr-defined]
    assert md.tail == "Sec"
    assert live.shown[-1] is not None
    clock.now = 2.0
    md.append("ond\n")
    md.finish()
    assert live.shown[-1] is None
    assert console.file.getvalue() == whole("First paragraph.\n\nSecond\n")  # type: ignore[attr-defined]


class JumpingClock:
    """Every reading is a second later, so no piece is ever throttled."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_a_line_that_may_still_continue_the_block_before_keeps_it_live() -> None:
    md = MarkdownStream(make_console(), clock=JumpingClock(), live=RecordingLive())
    md.append("1. a\n\n2")
    assert md.tail == "1. a\n\n2"
    md.append(". b\n\n   c")
    assert md.tail == "1. a\n\n2. b\n\n   c"
    md.append("\n\n```\nx\n\ny")
    assert md.tail == "```\nx\n\ny"
    md.append("\n```\n\nd")
    assert md.tail == "d"


def test_an_open_code_fence_is_never_cut() -> None:
    md = MarkdownStream(make_console(), clock=ManualClock(), live=RecordingLive())
    md.append("```\na\n\nb\n\nc\n")
    assert md.tail == "```\na\n\nb\n\nc\n"


def test_updates_are_throttled_by_the_clock() -> None:
    clock = ManualClock()
    live = RecordingLive()
    md = MarkdownStream(make_console(), clock=clock, live=live, fps=10)
    md.update("a")
    md.update("ab")
    md.update("abc")
    assert len(live.shown) == 1
    clock.now = 0.2
    md.update("abcd")
    assert len(live.shown) == 2


def test_sample_document_streams_to_the_whole_render() -> None:
    for size in (1, 3, 7, 50):
        cuts = list(range(size, len(SAMPLE), size))
        assert stream(SAMPLE, cuts, ManualClock())[0] == whole(SAMPLE), size


def test_block_starts_follow_the_parser() -> None:
    assert block_starts("a\n\n- b\n\n- c\n\nd\n") == [0, 2, 6]


LINES = st.sampled_from(
    [
        "",
        "",
        "",
        "text",
        "more *em* and **strong**",
        "# Heading",
        "## Sub",
        "```",
        "```py",
        "    indented",
        "- item",
        "  - nested",
        "1. first",
        "2) second",
        "> quote",
        ">",
        "---",
        "***",
        "| a | b |",
        "|---|---|",
        "| 1 | 2 |",
        "===",
        "<div>",
        "</div>",
        "<!--",
        "-->",
        "`code` ~~strike~~",
        "  continued",
        "* star",
        "+ plus",
        "\t",
        "line with trailing  ",
        "[link](http://x.y)",
        "![img](a.png)",
        "~~~",
        "1.",
        "-",
    ]
)
RANDOM_LINE = st.text(alphabet="#-*`>|=_ 1.\tab[]()!~<", max_size=12)


@settings(max_examples=200)
@given(
    lines=st.lists(st.one_of(LINES, LINES, RANDOM_LINE), max_size=25),
    trailing_newline=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=30),
    tick=st.booleans(),
)
def test_streaming_any_markdown_ends_as_the_whole_render(
    lines: list[str], trailing_newline: bool, cuts: list[int], tick: bool
) -> None:
    text = "\n".join(lines) + ("\n" if trailing_newline else "")
    output, md = stream(text, cuts, ManualClock() if tick else None)
    assert output == whole(text)
    assert md.tail == ""


class FakeTimers:
    def __init__(self) -> None:
        self.calls: list[tuple[float, Callable[[], None]]] = []

    def __call__(self, delay: float, callback: Callable[[], None]) -> None:
        self.calls.append((delay, callback))


def shown_text(renderable: RenderableType | None) -> str:
    console = make_console()
    console.print(renderable)
    return console.file.getvalue().rstrip()  # type: ignore[attr-defined]


def test_a_piece_inside_the_throttle_window_is_drawn_when_the_window_closes() -> None:
    clock, live, timers = ManualClock(), RecordingLive(), FakeTimers()
    md = MarkdownStream(make_console(), clock=clock, live=live, fps=10, schedule=timers)
    md.append("a")
    clock.now = 0.04
    md.append("b")
    md.append("c")
    assert len(live.shown) == 1
    assert [round(delay, 6) for delay, _ in timers.calls] == [0.06]
    clock.now = 0.1
    timers.calls[0][1]()
    assert shown_text(live.shown[-1]) == "abc"
    md.append("d")
    clock.now = 0.25
    md.finish()
    timers.calls[-1][1]()
    assert live.shown[-1] is None


async def test_the_timer_runs_on_the_event_loop() -> None:
    drawn = asyncio.Event()

    class Live:
        def show(self, renderable: RenderableType | None) -> None:
            if renderable is not None and shown_text(renderable) == "ab":
                drawn.set()

    md = MarkdownStream(make_console(), live=Live(), fps=50)
    md.append("a")
    md.append("b")
    await asyncio.wait_for(drawn.wait(), timeout=10)


def test_the_live_tail_renders_like_the_markdown_at_every_width() -> None:
    tail = LiveTail(SAMPLE)
    for width in (80, 40, 80):
        console = Console(file=io.StringIO(), width=width, color_system=None)
        console.print(tail)
        assert console.file.getvalue() == whole(SAMPLE, width)  # type: ignore[attr-defined]


def test_a_long_code_fence_shows_only_its_last_lines_while_live() -> None:
    fence = "```python\n" + "".join(f"x = {i}\n" for i in range(100))
    assert live_text(fence, 5) == "```python\nx = 96\nx = 97\nx = 98\nx = 99\n"
    assert live_text("```\na\n", 5) == "```\na\n"
    prose = "".join(f"line {i}\n" for i in range(100))
    assert live_text(prose, 5) == prose


def test_markdown_renders_as_richs_own() -> None:
    from rich.markdown import Markdown

    def colour(renderable: RenderableType) -> str:
        console = Console(file=io.StringIO(), width=60, color_system="truecolor")
        console.print(renderable)
        return console.file.getvalue()  # type: ignore[attr-defined]

    assert colour(markdown(SAMPLE)) == colour(Markdown(SAMPLE, code_theme=CODE_THEME))


def test_a_link_defined_after_the_block_before_still_resolves() -> None:
    text = "Para\n\n[x]: http://a.example\n\nSee [x] here.\n\nEnd\n"
    output, _ = stream(text, list(range(1, len(text))), ManualClock())
    assert "See x here." in output
    assert output == whole(text)
