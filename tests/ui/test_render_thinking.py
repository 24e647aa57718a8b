"""Thinking: streamed with its line breaks (its last lines), folded to a few drawn lines once
done, shown whole after Ctrl-T, reachable with `/expand thinking [N]`; a block with nothing
to show is not drawn."""

from __future__ import annotations

from di_code.agent import Agent
from di_code.ai import TextContent, ThinkingContent
from di_code.ai.providers.faux import create_faux_provider
from di_code.setup.prepared import Prepared
from di_code.ui.thinking_view import THINKING_LINES, thinking_live, thinking_panel
from tests.support.render import render_prompt, render_text
from tests.support.repl import chat, until


async def test_a_thinking_block_without_text_is_not_drawn() -> None:
    """The Responses API's encrypted reasoning arrives as a thinking block with no summary."""
    reply = {"type": "success", "content": [ThinkingContent("", "{}"), TextContent("Hi.")]}
    lines = await render_prompt([reply], [])
    assert "Hi." in "\n".join(lines)
    assert "✻ thinking" not in "\n".join(lines)


def test_streaming_thinking_keeps_its_line_breaks_and_shows_its_last_lines() -> None:
    live = render_text(thinking_live("First I read.\nThen I edit.\nThen I test."))
    assert live[1:4] == [
        "│ First I read.                                                                │",
        "│ Then I edit.                                                                 │",
        "│ Then I test.                                                                 │",
    ]
    long = render_text(thinking_live("\n".join(f"step {n}" for n in range(1, 11))))
    assert long[1].startswith("│ … 4 earlier lines ")
    assert [line[2:].split(" ")[:2] for line in long[2:8]] == [
        ["step", str(n)] for n in range(5, 11)
    ]


def test_a_finished_block_folds_by_drawn_lines_and_whole_shows_all() -> None:
    paragraph = " ".join(f"word{n}" for n in range(60))  # one line, wrapped to several
    folded = render_text(thinking_panel(paragraph))
    assert len(folded) == 2 + THINKING_LINES + 1
    assert (
        folded[-2].startswith("│ … ") and "more lines (Ctrl-T shows thinking whole)" in folded[-2]
    )
    whole = render_text(thinking_panel(paragraph, whole=True))
    assert "word59" in "".join(whole) and "more line" not in "".join(whole)


async def test_ctrl_t_shows_the_next_thinking_whole_and_expand_reaches_a_block() -> None:
    steps = "\n".join(f"step {n}" for n in range(1, 9))
    faux = create_faux_provider(
        [
            {"type": "success", "content": [ThinkingContent(steps), TextContent("One.")]},
            {"type": "success", "content": [ThinkingContent(steps), TextContent("Two.")]},
        ]
    )
    async with chat(Prepared(Agent(faux.provider, faux.model))) as session:
        session.type("first\r")
        await session.answered()
        session.type("\x14")
        await until(lambda: "Thinking is shown whole" in session.output)
        session.type("second\r")
        await session.answered()
        session.type("/expand thinking 1\r/expand thinking 3\r/exit\r")
    first, second = session.output.split("Thinking is shown whole")
    assert "step 3" in first and "step 4" not in first.split("› /expand")[0]
    before_expand, expanded = second.split("› /expand thinking 1")
    assert "step 8" in before_expand
    assert "✻ thinking 1" in expanded and "step 8" in expanded
    assert "✗ There are 2 thinking blocks: /expand thinking 1 to 2." in expanded
