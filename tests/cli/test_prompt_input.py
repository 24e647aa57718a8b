"""Prompt sources for `run`: argument, piped stdin, both, `-`, and nothing at all."""

from __future__ import annotations

import io

import pytest

from di_code.cli.prompt_input import NO_PROMPT, UsageError, read_prompt


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_argument_alone_with_a_terminal_on_stdin() -> None:
    assert read_prompt("fix it", Terminal("never read")) == "fix it"


def test_piped_stdin_alone_and_appended_to_the_argument() -> None:
    assert read_prompt(None, io.StringIO("diff --git a b\n")) == "diff --git a b\n"
    assert read_prompt("review this", io.StringIO("diff --git a b\n")) == (
        "review this\n\n<stdin>\ndiff --git a b\n</stdin>"
    )


def test_dash_reads_stdin_even_from_a_terminal() -> None:
    assert read_prompt("-", Terminal("typed text")) == "typed text"


def test_empty_stdin_leaves_the_argument_alone() -> None:
    assert read_prompt("hello", io.StringIO("")) == "hello"


@pytest.mark.parametrize(
    ("argument", "stdin"),
    [(None, io.StringIO("")), (None, Terminal("")), ("-", io.StringIO("  \n")), ("", Terminal())],
)
def test_no_prompt_is_a_usage_error(argument: str | None, stdin: io.StringIO) -> None:
    with pytest.raises(UsageError, match=NO_PROMPT):
        read_prompt(argument, stdin)
