"""Plan mode in a real `di-code chat` (pty + pyte, issue 44.1): Shift+Tab reaches it; a
scripted model explores read-only and presents its plan in a panel; approved, the mode switches
to the one chosen and the edits follow in it (unasked in accept-edits, asked in ask); sent back
with a remark, the model reads the remark; refused, nothing has changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.approval import GUARD_WAIT
from tests.support.chat import DI_CODE, spawn_chat
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")

SHIFT_TAB = "\x1b[Z"
PLAN = "Rename the greeting\n\n1. Change hello to hi in app.py\n2. Say what changed\n"
EDIT = {"path": "app.py", "old_text": "hello", "new_text": "hi"}
ORIGINAL = "print('hello')\n"


def explores_then_plans(server: LLMServer, *after: Turn) -> None:
    server.script(
        call("read", {"path": "app.py"}, "r1"),
        call("write", {"path": "app.py", "content": "sneaky\n"}, "w1"),
        call("exit_plan_mode", {"plan": PLAN}, "p1"),
        *after,
    )


def answer(screen: Screen, key: str) -> None:
    screen.pump(GUARD_WAIT)  # keys answer once the question has been on screen a moment
    screen.child.send(key)


def request_text(server: LLMServer, number: int) -> str:
    import json

    return json.dumps(server.requests[number].body, ensure_ascii=False)


def offered(server: LLMServer, number: int) -> set[str]:
    return {tool["function"]["name"] for tool in server.requests[number].body["tools"]}


def test_shift_tab_reaches_plan_mode_and_an_approved_plan_is_built_in_accept_edits(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text(ORIGINAL)
    explores_then_plans(llm_server, call("edit", EDIT, "e1"), Turn(text="Built it."))
    child = spawn_chat(llm_server, tmp_path, rows=60)
    screen = Screen(child, 60)
    try:
        screen.wait_for("mode: ask ·")
        for mode in ("accept-edits", "plan"):
            child.send(SHIFT_TAB)
            screen.wait_for(f"mode: {mode} ·")
        child.sendline("rename the greeting")
        screen.wait_for("Build this plan?")
        screen.wait_for("Change hello to hi in app.py")  # the plan, in its panel
        screen.wait_for("nothing changed yet")
        assert (tmp_path / "app.py").read_text() == ORIGINAL  # the write was refused
        answer(screen, "a")
        screen.wait_for("Built it.")
        screen.wait_for("mode: accept-edits ·")
        assert "Allow?" not in screen.text  # accept-edits: the edit ran unasked
    finally:
        child.close(force=True)
    assert (tmp_path / "app.py").read_text() == "print('hi')\n"
    assert "write" not in offered(llm_server, 0) and "exit_plan_mode" in offered(llm_server, 0)
    assert "write is not available in plan mode" in request_text(llm_server, 2)
    approved = request_text(llm_server, 3)
    assert "The user approved the plan. Permission mode: accept-edits" in approved
    assert "[ ] Change hello to hi in app.py" in approved  # the plan is the todo list
    assert "edit" in offered(llm_server, 3) and "exit_plan_mode" not in offered(llm_server, 3)


def test_a_plan_approved_in_ask_mode_asks_before_its_edit(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text(ORIGINAL)
    explores_then_plans(llm_server, call("edit", EDIT, "e1"), Turn(text="Built it."))
    child = spawn_chat(llm_server, tmp_path, "--permission-mode", "plan")
    screen = Screen(child)
    try:
        screen.wait_for("mode: plan ·")
        child.sendline("rename the greeting")
        screen.wait_for("Build this plan?")
        answer(screen, "y")
        screen.wait_for("Allow?")  # ask mode: the edit is asked about
        screen.wait_for("mode: ask ·")
        assert (tmp_path / "app.py").read_text() == ORIGINAL
        answer(screen, "y")
        screen.wait_for("Built it.")
    finally:
        child.close(force=True)
    assert (tmp_path / "app.py").read_text() == "print('hi')\n"
    assert "The user approved the plan. Permission mode: ask" in request_text(llm_server, 3)


def test_a_remark_keeps_planning_and_a_refused_plan_changes_nothing(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text(ORIGINAL)
    explores_then_plans(
        llm_server,
        call("exit_plan_mode", {"plan": "Rename it everywhere\n\n1. app.py\n2. README"}, "p2"),
        Turn(text="Stopped, as you asked."),
    )
    child = spawn_chat(llm_server, tmp_path, "--permission-mode", "plan")
    screen = Screen(child)
    try:
        screen.wait_for("mode: plan ·")
        child.sendline("rename the greeting")
        screen.wait_for("Build this plan?")
        answer(screen, "t")
        screen.wait_for("what to change in the plan")
        child.send("the README too\r")
        screen.wait_for("Rename it everywhere")
        screen.wait_for("Build this plan?", after="Rename it everywhere")
        answer(screen, "n")
        screen.wait_for("Stopped, as you asked.")
        screen.wait_for("mode: plan ·")
    finally:
        child.close(force=True)
    assert (tmp_path / "app.py").read_text() == ORIGINAL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.py"]
    remark = request_text(llm_server, 3)
    assert "The user wants the plan changed before anything is built: the README too" in remark
    assert "The user did not approve the plan." in request_text(llm_server, 4)
