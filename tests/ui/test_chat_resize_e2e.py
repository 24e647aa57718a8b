"""A terminal narrowed while a reply streams (tmux rewraps the rows already drawn): no line
of the reply is left behind by the live area and printed a second time. pyte does not rewrap
on resize, so the terminal here is a real tmux."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.narrowed_prompt import LINE, PRINTED, REDRAWN
from tests.support.processes import wait_until
from tests.support.tmux_chat import NEEDS_TMUX, Tmux, chat_command, screen_text, wait_for
from tests.support.tmux_chat import tmux as tmux  # the fixture

pytestmark = NEEDS_TMUX

PARAGRAPHS = [
    f"Paragraph {n} says something fairly long, so that sixty columns must wrap it in two."
    for n in range(1, 9)
]

SETTLE = 1.0


def test_narrowing_the_terminal_mid_reply_prints_no_line_twice(
    llm_server: LLMServer, tmp_path: Path, tmux: Tmux
) -> None:
    llm_server.script(Turn(text="\n\n".join(PARAGRAPHS), chunk_size=6, delay=0.03))
    workspace = tmp_path / "work"
    workspace.mkdir()
    chat = chat_command(llm_server)
    tmux("new-session", "-d", "-x", "100", "-y", "40", "-c", str(workspace), chat)
    wait_for(tmux, lambda text: "›" in text, "the prompt")
    tmux("send-keys", "go", "Enter")
    streaming = PARAGRAPHS[2][:70]  # a line of the live area longer than the new width
    wait_for(tmux, lambda text: streaming in text, "the reply streaming")
    tmux("resize-window", "-x", "60", "-y", "40")
    text = wait_for(tmux, lambda text: "ctx " in text, "the end of the reply")
    counts = {n: text.count(f"Paragraph {n} says") for n in range(1, 9)}
    assert counts == dict.fromkeys(range(1, 9), 1), text


def test_a_line_printed_before_the_narrowing_is_handled_is_not_left_behind(
    tmp_path: Path, tmux: Tmux
) -> None:
    """The race the test above meets on a loaded machine, every run: the terminal is narrower
    and has rewrapped the prompt's drawing, the SIGWINCH is not handled yet, and the line
    the drawing showed is printed above the prompt (tests/support/narrowed_prompt.py). The
    erase before the print reaches the rows the rewrap added."""
    root = Path(__file__).parents[2]
    program = f"{shlex.quote(sys.executable)} -m tests.support.narrowed_prompt"
    tmux("new-session", "-d", "-x", "100", "-y", "20", "-c", str(root), program)
    wait_for(tmux, lambda text: LINE in text, "the line drawn in the prompt")
    tmux("resize-window", "-x", "60", "-y", "20")
    text = wait_for(tmux, lambda text: PRINTED in text, "the prompt drawn after the print")
    assert text.count(LINE[:40]) == 1, text
    tmux("send-keys", "Enter")


def test_a_panel_drawn_again_while_the_terminal_narrows_is_not_left_behind(
    tmp_path: Path, tmux: Tmux
) -> None:
    """The race the test below meets on a loaded machine: a drawing made at the old width of
    a panel laid out at the new one (the terminal narrowed between the two reads of its
    size), over the first drawing the terminal rewrapped (tests/support/narrowed_prompt.py).
    Its rows are no wider than the new width, but the rewrapped ones are still on screen, and
    the erase when the narrowing is handled reaches them."""
    root = Path(__file__).parents[2]
    ready = tmp_path / "ready"
    program = f"{shlex.quote(sys.executable)} -m tests.support.narrowed_prompt --drawing {ready}"
    tmux("new-session", "-d", "-x", "100", "-y", "30", "-c", str(root), program)
    wait_until(ready.exists, "the second drawing to have read the terminal's width")
    tmux("resize-window", "-x", "60", "-y", "30")
    text = wait_for(tmux, lambda text: REDRAWN in text, "the prompt drawn again", history=False)
    rows = text.splitlines()
    assert half_rows(rows) == [], text
    assert sum(row.startswith("╭─") for row in rows) == 1, text
    tmux("send-keys", "Enter")


def test_narrowing_the_terminal_under_a_running_tool_leaves_one_panel_on_screen(
    llm_server: LLMServer, tmp_path: Path, tmux: Tmux
) -> None:
    """The live panel is taller, rewrapped, than the rows above the prompt: tmux keeps the
    cursor's row and moves the rows that do not fit into its history, out of reach. What is
    still on screen is erased whole, and without clearing from the top-left corner, which
    tmux takes for `clear` and copies the screen (the old panel) into its history."""
    command = "for i in $(seq 1 300); do echo line $i; sleep 0.05; done"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": command}, "b1"),)), Turn(text="Done.")
    )
    workspace = tmp_path / "work"
    workspace.mkdir()
    chat = chat_command(llm_server)
    tmux("new-session", "-d", "-x", "100", "-y", "30", "-c", str(workspace), chat)
    wait_for(tmux, lambda text: "›" in text, "the prompt")
    tmux("send-keys", "go", "Enter")
    wait_for(tmux, lambda text: "line 9" in text, "the running panel")
    tmux("resize-window", "-x", "60", "-y", "30")
    wait_for(tmux, lambda text: "…─╮" in text, "the panel drawn again", history=False)
    time.sleep(SETTLE)  # the redraws after the resize (a second SIGWINCH, the spinner)
    visible = screen_text(tmux, history=False)
    rows = visible.splitlines()
    assert half_rows(rows) == [], visible  # no row of the old panel, cut in two by the rewrap
    assert sum(row.startswith("╭─") for row in rows) == 1, visible
    # Nor was the screen copied into the history: only its top rows, rewrapped past the top
    # of the screen, are there (the panel's title and status lines, not its output lines).
    history = screen_text(tmux)
    assert not [row for row in half_rows(history.splitlines()) if "│ line" in row], history
    tmux("send-keys", "C-c")


def half_rows(rows: list[str]) -> list[str]:
    """Rows of a panel 100 columns wide that a 60-column terminal cut in two."""
    return [row for row in rows if row.strip() and row.strip()[0] in "│╭╰" and len(row) < 60]
