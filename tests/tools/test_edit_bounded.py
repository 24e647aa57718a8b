"""The edit's failure hint and every diff on model input do bounded work (issue 41.2): a
6,000-line file and a 300-line old_text that is not in it took about 68 s of CPU."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from di_code.agent import AgentTool
from di_code.tools.builtin.support.closest_match import SCANNED_CHARS, TOO_LARGE, closest_hint
from di_code.tools.builtin.support.edit_text import Document, Edit, apply_edits
from di_code.tools.builtin.support.line_diff import unified_diff
from di_code.tools.common.errors import ToolError
from tests.support.big_files import LIVENESS, code_lines
from tests.tools.conftest import error_of


async def test_a_long_missing_old_text_fails_within_a_bound(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "big.py").write_text("\n".join(code_lines(6000, 1)) + "\n")
    missing = "\n".join(code_lines(300, 2))
    message = await asyncio.wait_for(
        error_of(tools["edit"], {"path": "big.py", "old_text": missing, "new_text": "x"}),
        LIVENESS,
    )
    assert message.startswith("old_text not found in big.py. ")


def test_the_hint_still_names_a_whitespace_twin_in_a_large_file() -> None:
    lines = code_lines(6000, 3)
    wanted = "\n".join(line.strip() for line in lines[4000:4300])  # indentation lost
    hint = closest_hint("\n".join(lines), wanted)
    assert hint.startswith("Closest match at line 4001: ")


def test_the_hint_names_a_one_line_typo() -> None:
    text = "def f():\n    return compute(total)\n\ndef g():\n    return 2\n"
    hint = closest_hint(text, "    return compute(totl)")
    assert hint == 'Closest match at line 2: "    return compute(total)"'


async def test_a_diff_that_makes_difflib_quadratic_is_bounded() -> None:
    """Short lines that repeat, but not often enough for difflib's junk heuristic: its
    matcher took 22 s for 20,000 of them here."""
    before = "\n".join(str(i % 150) for i in range(40_000))
    after = "\n".join(str(i * 7 % 151) for i in range(40_000))
    diff = await asyncio.wait_for(asyncio.to_thread(unified_diff, before, after, "f.txt"), LIVENESS)
    assert diff.startswith("--- a/f.txt\n+++ b/f.txt\n@@ -1,")


def patched(before: str, diff: str) -> list[str]:
    """The lines of `before` with `diff` applied, checking every line it says is there."""
    lines, out, at = before.splitlines(), [], 0
    for line in diff.split("\n")[2:] if diff else []:
        if line.startswith("@@"):
            start = int(line.split()[1][1:].split(",")[0])
            stop = start if line.split()[1].endswith(",0") else start - 1
            out += lines[at:stop]
            at = stop
        elif line[:1] in (" ", "-"):
            assert lines[at] == line[1:]
            at += 1
            if line[0] == " ":
                out.append(line[1:])
        else:
            out.append(line[1:])
    return out + lines[at:]


@given(
    st.lists(st.sampled_from(["a", "b", "c", "", "  a"]), max_size=30),
    st.lists(st.sampled_from(["a", "b", "d", "", "  a"]), max_size=30),
    st.booleans(),
)
def test_a_diff_turns_before_into_after(before: list[str], after: list[str], end: bool) -> None:
    old, new = "\n".join(before) + "\n" * end, "\n".join(after)
    diff = unified_diff(old, new, "f")
    assert patched(old, diff) == new.splitlines()
    assert (diff == "") == (old.splitlines() == new.splitlines())


@given(st.text("ab\n\r", max_size=40), st.data())
def test_an_edit_diff_cut_between_replacements_is_the_whole_diff(
    text: str, data: st.DataObject
) -> None:
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=6)))
    spans = list(itertools.pairwise(cuts))[::2]
    edits = [Edit(text[a:b], data.draw(st.text("abx\n", max_size=6))) for a, b in spans]
    edits = [e for e in edits if e.old_text and text.count(e.old_text) == 1]
    try:
        applied = apply_edits(Document(text, False, False), edits, "f")
    except ToolError:
        return
    assert patched(text, applied.diff("f")) == applied.after.splitlines()


async def test_the_hint_on_one_long_line_and_a_long_old_text_is_bounded() -> None:
    text = "x " * 1_500_000  # 3 MB, one line, one token in two characters
    old = "x y " * 100_000
    hint = await asyncio.wait_for(asyncio.to_thread(closest_hint, text, old), LIVENESS)
    assert hint.startswith(("Closest match at line 1: ", "No similar text found"))


def test_a_file_too_large_to_search_says_so() -> None:
    assert closest_hint("a\n" * (SCANNED_CHARS // 2 + 1), "b") == TOO_LARGE
