"""The pty tests' terminal (tests/ui/test_approval_e2e.Screen) answers each cursor position
request once, with the position after what came before it, as a terminal does: an extra,
earlier answer made prompt-toolkit draw the prompt too tall, which scrolled the lines above
it (a note just printed) off the screen under load, when a note and a request came in one
read."""

from __future__ import annotations

from typing import Any, cast

import pexpect

from tests.support.screen import Screen


class ScriptedChild:
    """What a pexpect child offers the Screen: reads in the given pieces, sends recorded."""

    def __init__(self, *reads: str) -> None:
        self.reads = list(reads)
        self.sent: list[str] = []

    def read_nonblocking(self, size: int, timeout: float) -> str:
        if not self.reads:
            raise pexpect.TIMEOUT("nothing more")
        return self.reads.pop(0)

    def send(self, text: str) -> None:
        self.sent.append(text)


def pumped(*reads: str) -> list[str]:
    child = ScriptedChild(*reads)
    Screen(cast(Any, child)).pump(0.3)
    return child.sent


def test_a_request_after_output_in_the_same_read_is_answered_once_after_it() -> None:
    assert pumped("line one\r\nline two\r\n\x1b[6n") == ["\x1b[3;1R"]


def test_a_request_cut_in_two_by_a_read_is_answered_once() -> None:
    assert pumped("line one\r\n\x1b[", "6nmore") == ["\x1b[2;1R"]


def test_reads_without_a_request_get_no_answer() -> None:
    assert pumped("plain\r\n", "\x1b[?25l text") == []
