"""Terminal approvals: the answers understood, and no approver without a terminal."""

from __future__ import annotations

import io

import pytest

from di_code.cli.approval import parse_answer, terminal_approver
from di_code.tools.permissions import ApprovalRequest


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        ("y\n", "yes"),
        ("YES", "yes"),
        ("a", "always"),
        ("always\n", "always"),
        ("", "no"),
        ("x", "no"),
    ],
)
def test_parse_answer(typed: str, answer: str) -> None:
    assert parse_answer(typed) == answer


def test_no_terminal_no_approver() -> None:
    assert terminal_approver(io.StringIO(), Terminal()) is None
    assert terminal_approver(Terminal(), io.StringIO()) is None


async def test_terminal_approver_asks_on_stderr_and_reads_the_answer() -> None:
    stderr = Terminal()
    approver = terminal_approver(Terminal("a\n"), stderr)
    assert approver is not None
    assert await approver(ApprovalRequest("bash", {"command": "ls"}, "bash: ls")) == "always"
    assert "Allow bash: ls?" in stderr.getvalue()
