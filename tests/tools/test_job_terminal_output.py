"""What is new in an editor's terminal output from one look to the next (`fresh_output`): the
editor keeps the output's end only, so once it drops the beginning, the new part is found
after the old one's tail; output it dropped before we looked is said lost, never made up."""

from __future__ import annotations

from di_code.tools.builtin.support.job_terminal import ANCHOR, fresh_output


def look(seen: str, now: str, dropped: bool) -> tuple[str, bool]:
    return fresh_output(len(seen), seen[-ANCHOR:], now, dropped)


def test_while_nothing_is_dropped_the_new_part_follows_the_old() -> None:
    assert look("", "a\nb\n", False) == ("a\nb\n", False)
    assert look("a\nb\n", "a\nb\nc\n", False) == ("c\n", False)
    assert look("a\nb\n", "a\nb\n", False) == ("", False)


def test_once_the_editor_drops_the_beginning_the_new_part_follows_the_old_tail() -> None:
    old = "".join(f"line {n}\n" for n in range(1000))
    now = old[5000:] + "line 1000\nline 1001\n"
    assert look(old, now, True) == ("line 1000\nline 1001\n", False)
    assert look(now, now, True) == ("", False)


def test_output_dropped_before_a_look_is_said_lost() -> None:
    old = "".join(f"line {n}\n" for n in range(1000))
    now = "".join(f"line {n}\n" for n in range(5000, 6000))
    assert look(old, now, True) == (now, True)
    assert look("", now, True) == (now, True)  # the first look came after a drop


def test_output_that_repeats_itself_is_taken_as_old_not_read_twice() -> None:
    old = "y\n" * 5000
    assert look(old, "y\n" * 5000, True) == ("", False)
