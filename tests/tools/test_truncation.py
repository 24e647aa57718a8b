"""The output bound the tools share never leaves nothing: a line longer than the whole limit
is cut inside (at a character boundary), and prose can fill the limit with the start of the
line that did not fit."""

from __future__ import annotations

from di_code.tools.builtin.support.truncation import MAX_BYTES, keep_head, keep_tail


def test_a_single_line_over_the_limit_keeps_its_start() -> None:
    line = "é" * 40_000  # 80,000 bytes: the cut falls inside a character
    kept, cut = keep_head([line])
    assert cut is not None and cut.truncated_by == "bytes" and cut.line_cut
    assert len(kept) == 1 and line.startswith(kept[0])
    assert MAX_BYTES - 2 < len(kept[0].encode()) <= MAX_BYTES
    assert cut.to_dict()["output_lines"] == 1 and cut.to_dict()["line_cut"] is True


def test_whole_lines_are_kept_and_the_next_long_one_only_with_fill() -> None:
    lines = ["title", "x" * 70_000, "after"]
    kept, cut = keep_head(lines)
    assert kept == ["title"] and cut is not None and not cut.line_cut
    kept, cut = keep_head(lines, fill=True)
    assert kept[0] == "title" and kept[1] == "x" * (MAX_BYTES - len("title") - 1)
    assert cut is not None and cut.line_cut and cut.output_lines == 2


def test_the_line_limit_cuts_no_line() -> None:
    kept, cut = keep_head(["a"] * 3000, fill=True)
    assert len(kept) == 2000 and cut is not None and cut.truncated_by == "lines"
    assert not cut.line_cut


def test_a_single_line_over_the_limit_keeps_its_end_in_a_tail() -> None:
    kept, cut = keep_tail(["start" + "y" * 70_000])
    assert kept == ["y" * MAX_BYTES] and cut is not None and cut.line_cut
