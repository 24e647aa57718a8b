"""write and edit: exact, all-or-nothing, endings kept, serialized per file."""

from __future__ import annotations

import asyncio
from pathlib import Path

from di_code.agent import AgentTool
from tests.tools.conftest import error_of, run, text_of


async def test_write_creates_parent_folders(tools: dict[str, AgentTool], workspace: Path) -> None:
    result = await run(tools["write"], {"path": "a/b/c.txt", "content": "héllo\n"})
    assert text_of(result) == "Successfully wrote 7 bytes to a/b/c.txt"
    assert (workspace / "a/b/c.txt").read_bytes() == "héllo\n".encode()


async def test_write_replaces_a_file_byte_for_byte(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "f.txt").write_text("old content that is longer")
    await run(tools["write"], {"path": "f.txt", "content": "a\r\nb"})
    assert (workspace / "f.txt").read_bytes() == b"a\r\nb"


async def test_edit_applies_several_edits_and_returns_a_diff(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    edits = [
        {"old_text": "c = 3", "new_text": "c = 30"},
        {"old_text": "a = 1", "new_text": "a = 10"},
    ]
    result = await run(tools["edit"], {"path": "f.py", "edits": edits})
    assert text_of(result) == "Successfully applied 2 edits to f.py"
    assert (workspace / "f.py").read_text() == "a = 10\nb = 2\nc = 30\n"
    assert result.details == {
        "path": "f.py",
        "diff": "--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,3 @@\n-a = 1\n+a = 10\n b = 2\n-c = 3\n+c = 30",
    }


async def test_edit_accepts_a_single_old_new_pair(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "f.txt").write_text("hello world")
    result = await run(tools["edit"], {"path": "f.txt", "old_text": "world", "new_text": "there"})
    assert text_of(result) == "Successfully applied 1 edit to f.txt"
    assert (workspace / "f.txt").read_text() == "hello there"


async def test_an_ambiguous_edit_changes_nothing(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "f.txt").write_text("x = 1\nx = 1\n")
    message = await error_of(tools["edit"], {"path": "f.txt", "old_text": "x = 1", "new_text": "y"})
    assert message == (
        "old_text occurs 2 times in f.txt; include more surrounding lines so it matches "
        "exactly once, or set replace_all to replace every one"
    )
    assert (workspace / "f.txt").read_text() == "x = 1\nx = 1\n"


async def test_replace_all_renames_every_occurrence_in_one_call(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "f.py").write_text("old = 1\nprint(old)\nold_name = old + old\n")
    rename = {"old_text": "old", "new_text": "new", "replace_all": True}
    result = await run(tools["edit"], {"path": "f.py", **rename})
    assert text_of(result).startswith("Successfully applied 1 edit to f.py")
    assert (workspace / "f.py").read_text() == "new = 1\nprint(new)\nnew_name = new + new\n"
    (workspace / "g.txt").write_text("aaa b\n")  # matches taken left to right, never overlapping
    both = [rename | {"old_text": "aa", "new_text": "x"}, {"old_text": "b", "new_text": "c"}]
    await run(tools["edit"], {"path": "g.txt", "edits": both})
    assert (workspace / "g.txt").read_text() == "xa c\n"


async def test_replace_all_still_needs_a_match_and_no_overlap(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "f.txt").write_text("one two one\n")
    missing = {"old_text": "three", "new_text": "3", "replace_all": True}
    assert (await error_of(tools["edit"], {"path": "f.txt", **missing})).startswith(
        "old_text not found in f.txt."
    )
    edits = [
        {"old_text": "one", "new_text": "1", "replace_all": True},
        {"old_text": "two one", "new_text": "2"},
    ]
    message = await error_of(tools["edit"], {"path": "f.txt", "edits": edits})
    assert message == "Edits 1 and 2 overlap in f.txt; merge them into one edit"
    assert (workspace / "f.txt").read_text() == "one two one\n"


async def test_a_failed_multi_edit_changes_nothing_and_names_the_edit(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    original = "def f():\n    return 1\n\ndef g():\n    return 2\n"
    (workspace / "f.py").write_text(original)
    edits = [
        {"old_text": "return 1", "new_text": "return 10"},
        {"old_text": "def g():\n  return 2", "new_text": "def g():\n    return 20"},
    ]
    message = await error_of(tools["edit"], {"path": "f.py", "edits": edits})
    assert message == (
        "Edit 2 of 2: old_text not found in f.py. "
        'Closest match at line 4: "def g():\\n    return 2"'
    )
    assert (workspace / "f.py").read_text() == original


async def test_no_similar_text_gives_advice(tools: dict[str, AgentTool], workspace: Path) -> None:
    (workspace / "f.txt").write_text("alpha\nbeta\n")
    message = await error_of(tools["edit"], {"path": "f.txt", "old_text": "zzzzzz", "new_text": ""})
    assert message == (
        "old_text not found in f.txt. "
        "No similar text found; read the file again and copy the exact text."
    )


async def test_overlapping_edits_are_refused(tools: dict[str, AgentTool], workspace: Path) -> None:
    (workspace / "f.txt").write_text("one two three")
    edits = [
        {"old_text": "one two", "new_text": "1 2"},
        {"old_text": "two three", "new_text": "2 3"},
    ]
    message = await error_of(tools["edit"], {"path": "f.txt", "edits": edits})
    assert message == "Edits 1 and 2 overlap in f.txt; merge them into one edit"
    assert (workspace / "f.txt").read_text() == "one two three"


async def test_an_edit_that_changes_nothing_is_an_error(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "f.txt").write_text("same")
    message = await error_of(
        tools["edit"], {"path": "f.txt", "old_text": "same", "new_text": "same"}
    )
    assert message == "No changes made to f.txt: every new_text equals its old_text"


async def test_crlf_and_bom_are_preserved(tools: dict[str, AgentTool], workspace: Path) -> None:
    (workspace / "f.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    await run(tools["edit"], {"path": "f.txt", "old_text": "one\ntwo", "new_text": "1\n2\n2.5"})
    assert (workspace / "f.txt").read_bytes() == b"\xef\xbb\xbf1\r\n2\r\n2.5\r\nthree\r\n"


async def test_edit_of_a_missing_file(tools: dict[str, AgentTool]) -> None:
    message = await error_of(tools["edit"], {"path": "no.txt", "old_text": "a", "new_text": "b"})
    assert message == "File not found: no.txt"


async def test_edits_and_a_single_pair_together_are_refused(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "f.txt").write_text("a")
    params = {"path": "f.txt", "old_text": "a", "new_text": "b", "edits": []}
    assert await error_of(tools["edit"], params) == (
        "Give either edits or old_text/new_text, not both"
    )


async def test_concurrent_edits_of_one_file_both_land(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    lines = [f"line {i}" for i in range(200)]
    (workspace / "f.txt").write_text("\n".join(lines) + "\n")
    await asyncio.gather(
        *(
            run(tools["edit"], {"path": "f.txt", "old_text": f"line {i}\n", "new_text": f"L{i}\n"})
            for i in range(0, 200, 20)
        )
    )
    text = (workspace / "f.txt").read_text()
    assert all(f"L{i}\n" in text for i in range(0, 200, 20))
    assert "line 0\n" not in text and "line 21\n" in text


async def test_old_text_pasted_with_read_s_line_numbers_is_told_to_leave_them_out(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    """The edit stays exact (a file may hold numbered lines of its own), but the miss says
    what went wrong and where the text without the numbers is."""
    original = "a = 1\n\ndef g():\n    return 2\n"
    (workspace / "f.py").write_text(original)
    pasted = "     3\tdef g():\n     4\t    return 2"
    message = await error_of(tools["edit"], {"path": "f.py", "old_text": pasted, "new_text": ""})
    assert message == (
        "old_text not found in f.py. It starts its lines with read's line numbers (the number "
        "and the tab before each line), which are not part of the file; without them it "
        "matches at line 3: send only the text after each tab."
    )
    assert (workspace / "f.py").read_text() == original


async def test_a_numbered_old_text_that_misses_anyway_quotes_the_closest_lines(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "f.py").write_text("a = 1\n\ndef g():\n    return 2\n")
    pasted = "     3\tdef g():\n     4\t  return 2"
    message = await error_of(tools["edit"], {"path": "f.py", "old_text": pasted, "new_text": ""})
    assert message == (
        "old_text not found in f.py. It starts its lines with read's line numbers (the number "
        "and the tab before each line), which are not part of the file. "
        'Closest match at line 3: "def g():\\n    return 2"'
    )


async def test_a_file_that_holds_numbered_lines_is_edited_as_quoted(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "listing.txt").write_text("     1\tfirst\n     2\tsecond\n")
    edit = {"path": "listing.txt", "old_text": "     2\tsecond", "new_text": "     2\tthird"}
    await run(tools["edit"], edit)
    assert (workspace / "listing.txt").read_text() == "     1\tfirst\n     2\tthird\n"


async def test_a_pasted_number_is_told_for_one_line_and_a_copied_line_break_too(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "f.py").write_text("a = 1\nb = 2\n")
    for pasted in ("     2\tb = 2", "     1\ta = 1\n     2\tb = 2\n"):
        edit = {"path": "f.py", "old_text": pasted, "new_text": ""}
        assert "read's line numbers" in await error_of(tools["edit"], edit)
    for unlike_read in ("     1\ta = 1\n     5\tb = 2", "1" * 5000 + "\tb = 2"):
        edit = {"path": "f.py", "old_text": unlike_read, "new_text": ""}
        assert "line numbers" not in await error_of(tools["edit"], edit)
