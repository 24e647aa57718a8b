"""`/tree` in the REPL driven through prompt-toolkit's pipe input: what it says when there is
nothing to choose from or the file's entries form no tree (one line, the chat goes on), and
that a move replaces the conversation the next prompt continues."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from di_code.ai.types import TextContent, UserMessage
from di_code.session import Session
from di_code.session.branches import Branch
from tests.support.repl import TIMEOUT, chat, until
from tests.support.session_branches import setup_with, two_branches, user_entry, write_session

UP, ENTER, ESC = "\x1b[A", "\r", "\x1b"


async def test_without_a_saved_session_it_says_so(tmp_path: Path) -> None:
    async with chat(setup_with(None, tmp_path)) as session:
        session.type("/tree\r/exit\r")
    assert "✗ /tree needs a saved session" in session.output


async def test_entries_in_a_circle_are_one_red_line_and_the_chat_goes_on(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl",
        [user_entry("a", None, "x"), user_entry("b", "a", "y"), user_entry("a", "b", "z")],
    )
    setup = setup_with(Session.load(path), tmp_path)
    async with chat(setup) as session:
        session.type("/tree\r")
        await until(lambda: "in a circle" in session.output)
        session.type("/exit\r")
    [line] = [line for line in session.output.splitlines() if "in a circle" in line]
    assert line.startswith("✗ ") and "Traceback" not in session.output


async def test_enter_on_another_branch_is_the_conversation_from_then_on(tmp_path: Path) -> None:
    branched = two_branches(tmp_path)
    setup = setup_with(branched, tmp_path)
    async with chat(setup) as session:
        session.type("/tree\r")
        await until(lambda: session.repl.tree.open)
        session.type("q" + UP + ENTER)  # a letter typed at the list is no prompt later
        await until(lambda: "Now on “two”" in session.output)
        session.type("/exit\r")
    first = [m.content[0] for m in setup.agent.transcript if isinstance(m, UserMessage)]
    assert [c.text for c in first if isinstance(c, TextContent)] == ["one", "two\nsecond line"]
    assert setup.session is branched


async def test_esc_ends_it_while_the_tree_is_still_being_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building the tree of a hostile file takes seconds, on a thread: Esc does not wait."""
    import di_code.ui.tree_command

    release = threading.Event()

    def never_done(*args: object) -> list[Branch]:
        release.wait(TIMEOUT)
        return []

    monkeypatch.setattr(di_code.ui.tree_command, "branch_tree", never_done)
    setup = setup_with(two_branches(tmp_path), tmp_path)
    try:
        async with chat(setup) as session:
            session.type("/tree\r")
            await until(lambda: session.repl.busy)
            session.type(ESC)
            await until(lambda: "Left on the same branch" in session.output)
            session.type("/exit\r")
    finally:
        release.set()
