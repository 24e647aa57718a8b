"""A conversation as Markdown to paste into an issue: prompts quoted, answers as written,
tool calls as a bold title over fenced arguments, diff and output, thinking folded.

Every fence is longer than the longest run of backticks in what it holds, so a result that
contains a fence cannot end it early. Control characters are shown as the chat shows them.
"""

from __future__ import annotations

import re

from di_code.system.safe_text import visible
from di_code.ui.export_items import Item, Mark, Prompt, Reply, Thinking, ToolPanel

_TICKS = re.compile(r"`+")


def markdown_page(title: str, meta: str, items: list[Item]) -> str:
    parts = [f"# {_line(title)}", f"_{_line(meta)}_", *(_item(item) for item in items)]
    return "\n\n".join(parts) + "\n"


def fenced(text: str, language: str = "") -> str:
    """`text` in a code fence no line of it can close."""
    longest = max((len(run) for run in _TICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{visible(text)}\n{fence}"


def inline_code(text: str) -> str:
    """`text` as inline code, its delimiters longer than any backtick run inside."""
    longest = max((len(run) for run in _TICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{_line(text)}{pad}{ticks}"


def _answer(text: str) -> str:
    """An answer as written, unless it leaves a block open (a code fence an abort cut, an
    HTML comment or `<pre>` never closed) that would swallow every later item where the page is
    shown, hiding the tool calls that followed: that answer is fenced, as code, instead."""
    shown = visible(text)
    return shown if _ends_closed(shown) else fenced(text)


def _ends_closed(text: str) -> bool:
    """Whether a paragraph after `text` is a paragraph of its own (CommonMark, as an issue
    tracker reads it), and not part of a block `text` left open."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(f"{text}\n\n{_PROBE}\n")
    return (
        len(tokens) >= 3
        and tokens[-3].type == "paragraph_open"
        and tokens[-3].level == 0
        and tokens[-2].content == _PROBE
    )


_PROBE = "di-code-probe"


def _line(text: str) -> str:
    return visible(" ".join(text.split()))


def _item(item: Item) -> str:
    match item:
        case Prompt(text=text):
            quoted = "\n".join(f"> {line}" if line else ">" for line in visible(text).split("\n"))
            return f"**You**\n\n{quoted}"
        case Reply(text=text):
            return f"**Assistant**\n\n{_answer(text)}"
        case Thinking(text=text):
            return f"<details><summary>Thinking</summary>\n\n{fenced(text)}\n\n</details>"
        case ToolPanel():
            return _panel(item)
        case Mark(kind=kind, text=text):
            label = {"error": "Error", "aborted": "Aborted", "compaction": "", "model": ""}[kind]
            lead = f"**{label}:** " if label else ""
            return "\n".join(
                f"> {lead if n == 0 else ''}{line}"
                for n, line in enumerate(visible(text).split("\n"))
            )


def _panel(panel: ToolPanel) -> str:
    status = panel.status or ("no result saved" if panel.result is None else "")
    mark = "✗" if panel.is_error else "●"
    head = (
        f"{mark} **{_line(panel.name)}** {inline_code(panel.title)}"
        if panel.title
        else (f"{mark} **{_line(panel.name)}**")
    )
    parts = [head + (f" _({_line(status)})_" if status else "")]
    if panel.arguments:
        parts.append(
            f"<details><summary>Arguments</summary>\n\n{fenced(panel.arguments, 'json')}\n\n"
            "</details>"
        )
    if panel.nested:
        parts.append(fenced("\n".join(panel.nested)))
    if panel.diff:
        parts.append(fenced(panel.diff, "diff"))
    if panel.result is not None and (panel.result or not panel.diff):
        parts.append(fenced(panel.result or "(no output)"))
    return "\n\n".join(parts)
