"""`/tree`'s chooser as drawn and moved (issue 45 item 2): one line a branch, cut to the width,
every title through the sanitizer, only the rows around the cursor drawn; the cursor moves over
the branches one can go on from; Enter answers, a stop leaves it unanswered."""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path

import pytest
from rich.console import Console

from di_code.session.branches import Branch, branch_tree
from di_code.system.abort import AbortController
from di_code.ui.tree_view import DEEPER, GUIDE_LEVELS, TreeChooser
from tests.support.session_branches import cursor_on, two_branches, user_entry, write_session


def drawn(chooser: TreeChooser, width: int = 80) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(chooser)
    return console.file.getvalue().splitlines()  # type: ignore[attr-defined]


class Open:
    """A chooser open on `branches`, the way `/tree` opens it, on a screen of `rows` rows."""

    def __init__(self, branches: list[Branch], rows: int = 30) -> None:
        self.chooser = TreeChooser(lambda shown: None, lambda: rows)
        self.stop = AbortController()
        self.task = asyncio.ensure_future(self.chooser.choose(branches, self.stop.signal))

    async def __aenter__(self) -> Open:
        await asyncio.sleep(0)  # the task runs up to its wait
        assert self.chooser.open
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop.abort()
        await self.task


async def test_the_cursor_starts_on_the_current_branch_and_enter_chooses(tmp_path: Path) -> None:
    session = two_branches(tmp_path)
    branches = branch_tree(session.entries, session.leaf_id)
    async with Open(branches) as opened:
        lines = drawn(opened.chooser)
        assert cursor_on("other")(lines) and "← current" in lines[-1]
        assert lines[1].startswith("  one")  # the trunk: shown, not a branch to go on from
        opened.chooser.move(-1)
        assert cursor_on("two")(drawn(opened.chooser))
        opened.chooser.move(-1)  # no further: "one" branches, it is not a place to go on from
        assert cursor_on("two")(drawn(opened.chooser))
        opened.chooser.pick()
        chosen = await opened.task
    assert chosen is not None and chosen.title == "two"


async def test_a_stop_leaves_it_unanswered(tmp_path: Path) -> None:
    session = two_branches(tmp_path)
    async with Open(branch_tree(session.entries, session.leaf_id)) as opened:
        opened.stop.abort()
        assert await opened.task is None
        assert not opened.chooser.open


@pytest.mark.parametrize(
    "title",
    ["\x1b[2J\x1b]0;pwned\x07wiped", "evil\u202eexe.txt", "tab\there", "x" * 500, "界" * 100],
)
async def test_hostile_titles_are_shown_on_one_line_never_as_controls(
    tmp_path: Path, title: str
) -> None:
    path = write_session(
        tmp_path / "s.jsonl",
        [user_entry("a", None, "start"), user_entry("b", "a", title), user_entry("c", "a", "x")],
    )
    from di_code.session import Session

    session = Session.load(path)
    async with Open(branch_tree(session.entries, session.leaf_id)) as opened:
        lines = drawn(opened.chooser, width=60)
    assert len(lines) == 4  # the header and three branches, each on one line
    text = "\n".join(lines)
    assert "\x1b" not in text and "\u202e" not in text and "\t" not in text
    from rich.cells import cell_len

    assert all(cell_len(line) <= 60 for line in lines)


async def test_a_newline_in_a_prompt_shows_its_first_line(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl",
        [
            user_entry("a", None, "start"),
            user_entry("b", "a", "first\rsecond\nthird"),
            user_entry("c", "a", "other"),
        ],
    )
    from di_code.session import Session

    session = Session.load(path)
    async with Open(branch_tree(session.entries, session.leaf_id)) as opened:
        row = drawn(opened.chooser)[2]
    assert "first" in row and "second" not in row and "third" not in row


def comb(count: int) -> list[Branch]:
    """`count` branch points, each with a side branch that ends and a spine that goes on."""
    branches: list[Branch] = []
    for depth in range(count):
        spine = len(branches) - 1 if branches else None
        parent = None if spine is None else spine
        branches.append(
            Branch(f"side {depth}", 0, 1, 1, f"x{depth}", depth, parent, False, True, False)
        )
        branches.append(
            Branch(f"spine {depth}", 0, 1, 1, f"s{depth}", depth, parent, True, False, False)
        )
    branches[-1] = Branch("end", 0, 1, 1, "end", count - 1, branches[-1].parent, True, True, True)
    return branches


async def test_100k_branches_draw_only_the_rows_around_the_cursor_with_capped_guides() -> None:
    branches = comb(50_000)
    async with Open(branches, rows=20) as opened:
        lines = drawn(opened.chooser, width=100)
        assert len(lines) <= 20
        assert cursor_on("end")(lines) and "of 100000" in lines[-1]
        assert all(DEEPER in line for line in lines[1:-1])
        deepest = max(line.count("│") + line.count("├") + line.count("└") for line in lines)
        assert deepest <= GUIDE_LEVELS
        opened.chooser.move(-(1 << 30))  # Home
        lines = drawn(opened.chooser, width=100)
        assert cursor_on("side 0")(lines) and "rows 1-" in lines[-1]


async def test_the_tree_is_drawn_with_its_guides(tmp_path: Path) -> None:
    from di_code.session import Session
    from di_code.ui.tree_view import HEADER

    path = write_session(
        tmp_path / "s.jsonl",
        [
            user_entry("a", None, "fix the parser bug"),
            user_entry("b", "a", "add tests"),
            user_entry("c", "a", "rewrite it"),
            user_entry("d", None, "start over"),  # `/rewind 1 conversation`: from the start
        ],
    )
    session = Session.load(path)
    when = time.strftime("%m-%d %H:%M", time.localtime(0.005))
    about = f" · {when} · 1 prompt, 0 turns"
    async with Open(branch_tree(session.entries, session.leaf_id)) as opened:
        assert drawn(opened.chooser, width=100) == [
            HEADER,
            f"  ├─ fix the parser bug{about}",
            f"  │  ├─ add tests{about}",
            f"  │  └─ rewrite it{about}",
            f"❯ └─ start over{about}  ← current",
        ]
