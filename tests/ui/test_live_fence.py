"""The live view of a code fence: kept lines, and the same picture as Rich's whole block."""

from __future__ import annotations

import io

from rich.console import Console, ConsoleOptions
from rich.segment import Segment

from di_code.ui.live_fence import FencePreview, split_fence
from di_code.ui.markdown_stream import CODE_THEME, LiveTail, markdown

Lines = list[list[Segment]]


def console() -> Console:
    return Console(file=io.StringIO(), width=40, height=30, color_system="truecolor")


def rendered(renderable: object) -> str:
    out = console()
    out.print(renderable)
    return out.file.getvalue()  # type: ignore[attr-defined,no-any-return]


def test_split_fence_finds_the_code_of_one_fence() -> None:
    assert split_fence("```py\na = 1\nb") == ("```py", ["a = 1", "b"])
    assert split_fence("~~~\na\n\n\n") == ("~~~", ["a"])
    assert split_fence("````\na\n```\nb\n````\n\n") == ("````", ["a", "```", "b"])
    assert split_fence("  ```\na\n   ```  \n\n") == ("  ```", ["a"])


def test_split_fence_refuses_what_is_not_one_fence() -> None:
    assert split_fence("text\n```\na") is None
    assert split_fence("``` a`b\nc") is None
    assert split_fence("```\na\n```\nafter") is None


class CountingPreview(FencePreview):
    def __init__(self) -> None:
        super().__init__(CODE_THEME)
        self.rendered: list[str] = []

    def _render(self, console: Console, options: ConsoleOptions, language: str, line: str) -> Lines:
        self.rendered.append(line)
        return super()._render(console, options, language, line)


def test_the_preview_draws_the_fence_as_rich_does() -> None:
    code = ["def f(x):", "    return x + 1", "", "print(f(2))  # a comment long enough to wrap"]
    out = console()
    preview = CountingPreview()
    lines = preview.lines(out, out.options, "```python", code)
    whole = out.render_lines(markdown("```python\n" + "\n".join(code) + "\n```"), out.options)
    assert lines == whole
    assert preview.rendered == code


def test_the_preview_renders_only_new_lines() -> None:
    out = console()
    preview = CountingPreview()
    preview.lines(out, out.options, "```", ["a", "b"])
    preview.lines(out, out.options, "```", ["a", "b", "c"])
    assert preview.rendered == ["a", "b", "c"]
    preview.lines(out, out.options.update_width(30), "```", ["a", "b", "c"])
    assert len(preview.rendered) == 6


def test_a_live_fence_shows_its_last_lines_like_the_whole_block() -> None:
    code = [f"x_{i} = {i}" for i in range(100)]
    shown = rendered(LiveTail("```python\n" + "\n".join(code)))
    last = "```python\n" + "\n".join(code[-27:]) + "\n```"
    assert shown == rendered(markdown(last))
