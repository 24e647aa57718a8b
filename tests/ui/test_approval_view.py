"""What an approval shows: all of a write, of an edit's diff, of an MCP call's arguments; a view
taller than the screen shows its ends and `v` shows the rest."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from rich.console import Console
from rich.text import Text

from di_code.tools.common.workspace import Workspace
from di_code.tools.policy.permissions import ApprovalRequest, grant_offers
from di_code.ui.approval import ReplApprover
from di_code.ui.approval_view import approval_body, approval_header, fit
from tests.support.approval import opened


def request(tool: str, **arguments: object) -> ApprovalRequest:
    return ApprovalRequest(tool, dict(arguments), tool, grant_offers(tool, dict(arguments)))


def approval_view(request: ApprovalRequest, workspace: Workspace | None = None) -> Text:
    """The question's first line and its body, as printed."""
    view = approval_header(request)
    body = approval_body(request, workspace)
    return view if body is None else Text("\n").join([view, body])


def numbered(count: int, word: str = "line") -> str:
    return "".join(f"{word} {n}\n" for n in range(1, count + 1))


def test_a_40_line_write_shows_every_line() -> None:
    shown = approval_view(request("write", path="new.txt", content=numbered(40))).plain
    assert all(f"line {n}\n" in f"{shown}\n" for n in range(1, 41))
    assert "more line" not in shown


def test_a_30_line_edit_shows_its_whole_diff(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(numbered(30, "old"), encoding="utf-8")
    edit = request("edit", path="a.txt", old_text=numbered(30, "old"), new_text=numbered(30))
    shown = approval_view(edit, Workspace.create(tmp_path)).plain
    assert "+line 30" in shown and "-old 30" in shown and "-old 1\n" in shown
    assert "more diff lines" not in shown


def test_a_write_over_a_file_shows_the_diff_against_what_it_replaces(tmp_path: Path) -> None:
    (tmp_path / "conf.py").write_text("DEBUG = False\nHOSTS = []\n", encoding="utf-8")
    write = request("write", path="conf.py", content="DEBUG = False\nHOSTS = ['*']\n")
    shown = approval_view(write, Workspace.create(tmp_path)).plain
    assert "-HOSTS = []" in shown and "+HOSTS = ['*']" in shown
    same = request("write", path="conf.py", content="DEBUG = False\nHOSTS = []\n")
    assert "no change" in approval_view(same, Workspace.create(tmp_path)).plain


def test_an_mcp_call_shows_server_tool_and_complete_arguments() -> None:
    reason = "x" * 500 + " END"
    call = request("mcp__gh__delete_repo", owner="me", repo="prod", reason=reason)
    shown = approval_view(call).plain
    assert shown.startswith("? mcp__gh__delete_repo")
    assert "MCP server gh · tool delete_repo" in shown
    assert '"repo": "prod"' in shown and reason in shown


def test_zero_width_and_bidi_characters_are_marked_in_approvals(tmp_path: Path) -> None:
    write = request("write", path="x.sh", content="rm\u200b -rf /tmp/a\u202e\n")
    assert "rm<U+200B> -rf /tmp/a<U+202E>" in approval_view(write).plain
    bash = request("bash", command="ls\u2066 -la")
    assert "ls<U+2066> -la" in approval_view(bash).plain


def test_a_view_taller_than_the_screen_shows_its_ends_and_how_to_see_the_rest() -> None:
    body = Text("\n".join(f"line {n}" for n in range(1, 101)))
    shown, hidden = fit(body, 20, 80)
    lines = shown.plain.splitlines()
    assert len(lines) <= 20 and hidden == 100 - (len(lines) - 1)
    assert lines[0] == "line 1" and lines[-1] == "line 100"
    assert f"{hidden} more lines here: press v to see all 100" in shown.plain
    assert fit(body, 200, 80) == (body, 0)


def test_long_lines_count_as_the_rows_they_wrap_to() -> None:
    body = Text("\n".join("y" * 200 for _ in range(10)))  # 3 rows each at 80 columns
    assert fit(body, 30, 80)[1] == 0
    assert fit(body, 20, 80)[1] > 0


async def test_the_chat_question_offers_v_and_v_shows_the_whole_view() -> None:
    console = Console(file=io.StringIO(), width=80, height=30)
    approver = ReplApprover(console)
    shown: list[Text] = []
    approver.show_all = shown.append
    asking = asyncio.create_task(approver(request("write", path="n.txt", content=numbered(60))))
    await opened(approver)
    assert approver.prompt_line("").endswith("[v] view all")
    approver.press("v")
    assert not asking.done()
    assert "line 1\n" in shown[0].plain and "line 60" in shown[0].plain
    approver.press("n")
    await asking
    short = asyncio.create_task(approver(request("write", path="n.txt", content="one\n")))
    await opened(approver)
    assert "[v]" not in approver.prompt_line("")
    approver.press("v")  # nothing to see: no answer
    assert not short.done()
    approver.press("y")
    await short


def test_a_command_of_many_lines_is_a_body_that_fits_the_screen() -> None:
    command = "echo start\n" + "\n" * 100 + "rm -rf ~/work\n" + "\n" * 100 + "echo end"
    bash = request("bash", command=command)
    assert approval_header(bash).plain == "? bash $"
    body = approval_body(bash)
    assert body is not None and body.plain == command
    shown, hidden = fit(body, 20, 80)
    assert hidden > 0 and f"press v to see all {len(command.splitlines())}" in shown.plain
    assert approval_header(request("bash", command="ls -la")).plain == "? bash $ ls -la"
    assert approval_body(request("bash", command="ls -la")) is None


def test_a_write_that_cannot_be_diffed_says_why_and_shows_all_it_writes(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    shown = approval_view(
        request("write", path="dir", content=numbered(3)), Workspace.create(tmp_path)
    ).plain
    assert "(Is a directory: dir; the whole new content:)" in shown and "line 3" in shown
