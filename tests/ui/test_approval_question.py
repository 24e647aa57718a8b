"""The REPL's approval question: what it shows, and when a key may answer it."""

from __future__ import annotations

import asyncio
import io

from rich.console import Console

from di_code.tools.policy.permissions import NO, YES, Approval, ApprovalRequest, grant_offers
from di_code.ui.approval import ReplApprover, YesNo, question
from di_code.ui.approval_view import approval_header
from tests.support.approval import opened
from tests.support.clock import ManualClock


def request(tool: str, **arguments: str) -> ApprovalRequest:
    return ApprovalRequest(tool, arguments, tool, grant_offers(tool, arguments))


def test_the_view_shows_the_complete_command_with_escapes_visible() -> None:
    spoof = "touch P\x1b[2K\rgit status; " + "x" * 300
    shown = approval_header(request("bash", command=spoof)).plain
    assert "\x1b" not in shown and "\r" not in shown
    assert "touch P␛[2K␍git status" in shown and shown.endswith("x" * 300)


def test_the_question_offers_the_grants_of_the_request() -> None:
    assert "[a] always: git status" in question(request("bash", command="git status -s"))
    edit = question(request("edit", path="a.py"))
    assert "[a] always: edits to a.py" in edit and "[e] always: all edits" in edit
    assert "[a]" not in question(request("bash", command="echo $HOME"))


async def test_keys_count_only_after_the_guard_and_never_while_typing() -> None:
    clock = ManualClock(100.0)
    approver = ReplApprover(Console(file=io.StringIO()), clock=clock)
    asking = asyncio.create_task(approver(request("bash", command="ls")))
    await opened(approver)
    assert not approver.keys_live("")  # not drawn yet
    approver.prompt_line("")
    clock.now += 0.1
    assert not approver.keys_live("")
    clock.now += 0.25
    assert approver.keys_live("")
    assert "Enter sends your message" in approver.prompt_line("w")
    assert not approver.keys_live("w")
    clock.now += 0.1
    assert not approver.keys_live("")  # just cleared: the user was typing a moment ago
    clock.now += 0.3
    assert approver.keys_live("")
    approver.press("e")  # not offered for bash: nothing happens
    assert not asking.done()
    approver.press("t")
    assert approver.telling and not approver.keys_live("")
    approver.answer(Approval(False, feedback="use ls -l"))
    assert await asking == Approval(False, feedback="use ls -l")


async def test_answers_by_key() -> None:
    for key, expected in (("y", YES), ("n", NO)):
        approver = ReplApprover(Console(file=io.StringIO()))
        asking = asyncio.create_task(approver(request("bash", command="ls")))
        await opened(approver)
        approver.press(key)
        assert await asking == expected
    approver = ReplApprover(Console(file=io.StringIO()))
    ls = request("bash", command="ls")
    asking = asyncio.create_task(approver(ls))
    await opened(approver)
    approver.press("a")
    assert await asking == Approval(True, ls.offers[0])


async def test_a_yes_no_question_takes_y_or_n_only_after_the_guard() -> None:
    clock = ManualClock(100.0)
    approver = ReplApprover(Console(file=io.StringIO()), clock=clock)
    trust = YesNo("Trust this project's settings (x.toml: permissions.mode)? y/N")
    asking = asyncio.create_task(approver.confirm(trust))
    await asyncio.sleep(0)
    assert approver.prompt_line("") == "y/N (Enter: no)"  # the question is printed above
    assert approver.prompt_line("hi").endswith("(clear the line to answer)")
    assert not approver.keys_live("hi")
    clock.now += 0.5
    for key in ("t", "a", "e"):  # the approvals' other keys mean nothing here
        approver.press(key)
    await asyncio.sleep(0)
    assert not asking.done() and not approver.telling
    approver.press("y")
    assert await asking is True
    asking = asyncio.create_task(approver.confirm(trust))
    await asyncio.sleep(0)
    approver.press("n")
    assert await asking is False


def plan_request(plan: str) -> ApprovalRequest:
    return ApprovalRequest(
        "exit_plan_mode", {"plan": plan}, "exit_plan_mode", modes=("accept-edits", "ask")
    )


async def test_a_plans_keys_choose_the_build_mode_keep_planning_or_stop() -> None:
    console = Console(file=io.StringIO(), width=100, color_system=None)
    answers = {}
    for key in ("a", "y", "n"):
        approver = ReplApprover(console)
        asking = asyncio.create_task(approver(plan_request("1. step\x1b[2J")))
        await opened(approver)
        approver.press("e")  # a grant's key: nothing for a plan
        assert not asking.done()
        approver.press(key)
        answers[key] = await asking
    assert answers == {
        "a": Approval(True, mode="accept-edits"),
        "y": Approval(True, mode="ask"),
        "n": NO,
    }
    shown = console.file.getvalue()
    assert "1. step␛[2J" in shown and "\x1b" not in shown  # the plan, escapes visible
    assert "approved: building in accept-edits mode" in shown
    line = question(plan_request("x"))
    assert line.startswith("Build this plan? [a] yes, in accept-edits mode")
