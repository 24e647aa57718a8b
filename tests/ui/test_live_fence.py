"""The live view of a code fence: kept lines, and the same picture as Rich's whole block."""

from __future__ import annotations

import io

from rich.console import Console
from rich.segment import Segment

from di_code.ui.live_fence import FencePreview, split_fence
from di_code.ui.markdown_stream import LiveTail, markdown

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


def test_the_preview_draws_the_fence_as_rich_does() -> None:
    code = ["def f(x):", "    return x + 1", "", "print(f(2))  # a comment long enough to wrap"]
    out = console()
    calls: list[str] = []

    def render(text: str) -> Lines:
        calls.append(text)
        return out.render_lines(markdown(text), out.options, pad=False)

    lines = FencePreview().lines("```python", code, 40, render)
    whole = out.render_lines(markdown("```python\n" + "\n".join(code) + "\n```"), out.options)
    assert lines == whole
    assert len(calls) == len(code)


def test_the_preview_renders_only_new_lines() -> None:
    out = console()
    calls: list[str] = []

    def render(text: str) -> Lines:
        calls.append(text)
        return out.render_lines(markdown(text), out.options, pad=False)

    preview = FencePreview()
    preview.lines("```", ["a", "b"], 40, render)
    preview.lines("```", ["a", "b", "c"], 40, render)
    assert calls == ["```\na\n", "```\nb\n", "```\nc\n"]
    preview.lines("```", ["a", "b", "c"], 30, render)
    assert len(calls) == 6


def test_a_live_fence_shows_its_last_lines_like_the_whole_block() -> None:
    code = [f"x_{i} = {i}" for i in range(100)]
    shown = rendered(LiveTail("```python\n" + "\n".join(code)))
    last = "```python\n" + "\n".join(code[-27:]) + "\n```"
    assert shown == rendered(markdown(last))
