"""Chat's notifier in parts: which terminal gets which sequence, text from outside made inert,
and focus reports read by prompt-toolkit's own parser as one ignored key each (never as Esc)."""

from __future__ import annotations

import pytest
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

from di_code.ui.attention import BELL, FOCUS_IN, FOCUS_OUT, read_focus_reports, terminal_alert


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"TERM_PROGRAM": "iTerm.app"}, "\x1b]9;hi\x07"),
        ({"TERM_PROGRAM": "WezTerm"}, "\x1b]9;hi\x07"),
        ({"TERM": "xterm-kitty"}, "\x1b]9;hi\x07"),
        ({"TERM": "foot-extra"}, "\x1b]777;notify;di-code;hi\x07"),
        ({"TERM": "rxvt-unicode-256color"}, "\x1b]777;notify;di-code;hi\x07"),
        ({"TERM_PROGRAM": "tmux", "TERM": "tmux-256color"}, BELL),
        ({"TERM": "xterm-256color"}, BELL),
        ({}, BELL),
    ],
)
def test_each_terminal_gets_what_it_shows(env: dict[str, str], expected: str) -> None:
    assert terminal_alert("hi", env) == expected
    assert terminal_alert("hi", env, "bell") == BELL


def test_text_from_outside_cannot_end_the_sequence_or_add_fields() -> None:
    alert = terminal_alert("bash\x07\x1b]0;title\x1b\\; x\u009c" + "y" * 500, {"TERM": "foot"})
    body = alert.removeprefix("\x1b]777;notify;di-code;").removesuffix("\x07")
    assert not any(c in body for c in "\x07\x1b;\u009c") and len(body) <= 200


def test_focus_reports_are_one_ignored_key_each() -> None:
    read_focus_reports()
    keys: list[KeyPress] = []
    parser = Vt100Parser(keys.append)
    parser.feed(f"a{FOCUS_OUT}b{FOCUS_IN}c")
    parser.flush()
    assert [(k.key, k.data) for k in keys] == [
        ("a", "a"),
        (Keys.Ignore, FOCUS_OUT),
        ("b", "b"),
        (Keys.Ignore, FOCUS_IN),
        ("c", "c"),
    ]
