"""A prompt's title in the checkpoint list (`undo --list`, /rewind): its first visible line,
after the `!command` notes, cut to TITLE_LENGTH, read from the start of the prompt only (a
100 MB prompt piped into `di-code run` is titled on the event loop: the loop-watch run of
tests/cli/test_run_interrupt.py is its test of time)."""

from __future__ import annotations

from di_code.ai.types import TextContent, UserMessage
from di_code.session.checkpoint_list import TITLE_LENGTH, typed_title
from di_code.session.prompt_notes import shell_note, with_notes


def title(text: str) -> str:
    return typed_title(UserMessage([TextContent(text)]))


def test_the_first_visible_line_is_the_title() -> None:
    assert title("\n \n  fix the parser  \nthen the tests\n") == "fix the parser"
    assert title("one line only   ") == "one line only"
    assert title("first\r\nsecond") == "first"
    assert title(" \n\t ") == ""
    assert title("") == ""


def test_a_long_first_line_is_cut() -> None:
    assert title("x" * 1000 + "\nmore") == "x" * TITLE_LENGTH


def test_a_huge_prompt_is_titled_by_its_first_line() -> None:
    huge = "see @notes.txt please\n" + "a log line\n" * 5_000_000
    assert title(huge) == "see @notes.txt please"


def test_the_commands_whose_output_led_the_prompt_come_first() -> None:
    prompt = with_notes([shell_note("ls -a", "a\nb")], "\n  what now?\nmore")
    assert title(prompt) == "!ls -a what now?"
