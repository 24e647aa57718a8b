"""Terminal approvals: the answers understood, the command shown safely before the question,
and no approver without a terminal."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from di_code.cli.approval import parse_answer, terminal_approver
from di_code.tools.policy.permissions import NO, YES, Approval, ApprovalRequest, grant_offers


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def bash_request(command: str) -> ApprovalRequest:
    arguments = {"command": command}
    return ApprovalRequest("bash", arguments, f"bash: {command}", grant_offers("bash", arguments))


LS = bash_request("ls docs")
ALWAYS_LS = Approval(True, LS.offers[0])


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        ("y\n", YES),
        ("YES", YES),
        ("a", ALWAYS_LS),
        ("e", Approval(False, feedback="e")),  # no second offer for bash
        ("", NO),
        ("n\n", NO),
        ("use ls -l instead\n", Approval(False, feedback="use ls -l instead")),
    ],
)
def test_parse_answer(typed: str, answer: Approval) -> None:
    assert parse_answer(typed, LS) == answer


def test_no_terminal_no_approver() -> None:
    assert terminal_approver(io.StringIO(), Terminal()) is None
    assert terminal_approver(Terminal(), io.StringIO()) is None


async def test_terminal_approver_asks_on_stderr_and_reads_the_answer() -> None:
    stderr = Terminal()
    approver = terminal_approver(Terminal("a\n"), stderr)
    assert approver is not None
    assert await approver(LS) == ALWAYS_LS
    question = "? bash: ls docs\nAllow? [y]es / [a] yes, don't ask again for ls docs /"
    assert question in stderr.getvalue()


async def test_a_spoofed_command_shows_its_escapes_and_cannot_redraw_the_question() -> None:
    stderr = Terminal()
    approver = terminal_approver(Terminal("n\n"), stderr)
    assert approver is not None
    spoof = "touch P\x1b[2K\rgit status"
    assert await approver(bash_request(spoof)) == NO
    shown = stderr.getvalue()
    assert "\x1b" not in shown and "\r" not in shown
    assert "touch P␛[2K␍git status\nAllow?" in shown


async def test_an_edit_shows_its_diff_and_a_write_its_content_before_the_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("one\nhello\nthree\n")
    edit = {"path": "notes.txt", "edits": [{"old_text": "hello", "new_text": "hi"}]}
    write = {"path": "new.txt", "content": "alpha\nbeta\n"}
    stderr = Terminal()
    approver = terminal_approver(Terminal("y\ny\n"), stderr)
    assert approver is not None
    for name, arguments in (("edit", edit), ("write", write)):
        request = ApprovalRequest(name, arguments, f"{name}: x", grant_offers(name, arguments))
        assert await approver(request) == YES
    shown = stderr.getvalue()
    assert "? edit: x\n@@ -1,3 +1,3 @@\n one\n-hello\n+hi\n three\nAllow?" in shown
    assert "? write: x\nalpha\nbeta\nAllow?" in shown
