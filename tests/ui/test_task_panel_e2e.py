"""A subagent's tool calls in a real chat (pty + pyte): nested under its task's live panel, one
line each that changes in place as the call ends, folded to the last few with a count of the
rest; parallel tasks each keep their own list; Ctrl-O shows every call and the whole answer;
one Ctrl-C stops the parent and both subagents (their commands killed) and the chat goes on."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest

from tests.support.chat import (
    DI_CODE,
    TIMEOUT,
    open_chat,
    processes_with_argv,
    quit_chat,
    spawn_env,
    wait_until_gone,
    wait_until_running,
)
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")

ROWS = 40
TALL = 70
WORKER = (
    "---\nname: worker\ndescription: Runs and reads things\ntools: Bash, Read, LS\n---\n"
    "You work hard.\n"
)


def task(call_id: str, prompt: str) -> ToolCallSpec:
    arguments = {"description": f"job {call_id}", "prompt": prompt, "subagent_type": "worker"}
    return ToolCallSpec("task", arguments, call_id)


def waiting_for(flag: str) -> str:
    return f"until [ -e {flag} ]; do sleep 0.05; done"


def bash(command: str, call_id: str) -> Turn:
    return Turn(tool_calls=(ToolCallSpec("bash", {"command": command}, call_id),))


def with_worker(workspace: Path) -> Path:
    agents = workspace / ".di-code" / "agents"
    agents.mkdir(parents=True)
    (agents / "worker.md").write_text(WORKER)
    return workspace


def panel(lines: list[str], title: str) -> list[str]:
    """The rows of the box whose top border carries `title`, borders included (empty while
    it is not drawn whole)."""
    top = next((n for n, line in enumerate(lines) if "╭" in line and title in line), None)
    if top is None:
        return []
    column = lines[top].index("╭")
    rows = enumerate(lines[top + 1 :], top + 1)
    bottom = next((n for n, line in rows if line[column : column + 1] == "╰"), top - 1)
    return lines[top : bottom + 1]


def panel_holds(title: str, *texts: str) -> Callable[[list[str]], bool]:
    def found(lines: list[str]) -> bool:
        body = "\n".join(panel(lines, title))
        return all(text in body for text in texts)

    return found


def test_a_subagent_s_calls_are_nested_under_its_task_folded_and_updated_in_place(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    workspace = with_worker(tmp_path)
    (workspace / "a.txt").write_text("alpha\n")
    reads = tuple(
        ToolCallSpec("read", {"path": name}, f"r{n}")
        for n, name in enumerate(("a.txt", "missing.txt", "a.txt", "a.txt"))
    )
    llm_server.script(
        Turn(tool_calls=(task("t1", "look around"),)),
        Turn(tool_calls=(ToolCallSpec("ls", {}, "l1"), *reads)),
        bash(waiting_for("go-1"), "b1"),
        bash(waiting_for("go-2"), "b2"),
        Turn(text="Looked at everything."),
        Turn(text="The subagent is done."),
    )
    child, screen = open_chat(llm_server, workspace, "--yes", rows=TALL)
    try:
        child.sendline("delegate the look")
        title = "task job t1 (worker)"
        first = f"bash $ {waiting_for('go-1')}"
        lines = screen.wait_until(panel_holds(title, f"◌ {first}"), "the first command running")
        box = panel(lines, title)
        nested = [row for row in box if "… " in row or "✓" in row or "✗" in row or "◌" in row]
        assert nested[0].startswith("│ … 2 earlier calls"), box
        assert [row.split()[1] for row in nested[1:]] == ["✗", "✓", "✓", "◌"], box
        assert "read a.txt" in box[-3]
        assert sum(title in line for line in lines) == 1  # one live panel, not one per update

        (workspace / "go-1").touch()
        second = f"bash $ {waiting_for('go-2')}"
        lines = screen.wait_until(
            panel_holds(title, f"✓ {first}", f"◌ {second}"), "the first done, the second running"
        )
        assert sum(first in line for line in lines) == 1  # the line changed in place
        assert "… 3 earlier calls" in "\n".join(panel(lines, title))

        (workspace / "go-2").touch()
        screen.wait_for("The subagent is done.")
        # the footer counts the subagent's 4 requests with the parent's 2 (10 in, 5 out each)
        lines = screen.wait_for("test-model · ↑60 ↓30 · ")
        box = panel(lines, title)  # the finished panel: the calls folded, then the answer
        assert "… 3 earlier calls" in box[1] and "7 tool calls" in box[-1]
        assert any("✓ " + second in row for row in box)
        assert any("Looked at everything." in row for row in box)

        child.sendcontrol("o")  # the subagent's whole conversation, kept with the session
        lines = screen.wait_until(
            panel_holds("#1 task job t1 (worker)", "› look around", "transcript: "),
            "the task's transcript",
        )
        expanded = panel(lines, "#1 task job t1 (worker)")
        inner = [row.strip("│ ") for row in expanded[1:-1]]
        tops = [row.removeprefix("╭─ ") for row in inner if row.startswith("╭─ ")]
        titles = [top.split("─")[0].strip() for top in tops]
        assert titles == [
            "ls",
            "read a.txt",
            "read missing.txt",
            "read a.txt",
            "read a.txt",
            f"bash $ {waiting_for('go-1')}",
            f"bash $ {waiting_for('go-2')}",
        ], expanded
        assert "alpha" in "\n".join(inner)  # what the subagent read, never in the parent's
        assert "Looked at everything." in "\n".join(inner)
        assert ".subagents/t1.jsonl" in "".join(inner)
        quit_chat(child)
    finally:
        child.close(force=True)
    (transcript,) = di_code_home.glob("sessions/*/*.subagents/t1.jsonl")
    kept = transcript.read_text()  # the subagent's whole conversation, with the session
    assert "missing.txt" in kept and "Looked at everything." in kept


def test_parallel_tasks_keep_their_own_calls_and_one_ctrl_c_stops_them_all(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    workspace = with_worker(tmp_path)
    seconds = {"ba": f"100.{os.getpid()}1", "bb": f"100.{os.getpid()}2"}
    llm_server.script(
        Turn(tool_calls=(task("t1", "the first job"), task("t2", "the second job"))),
        bash(f"sleep {seconds['ba']}", "ba"),
        bash(f"sleep {seconds['bb']}", "bb"),
        Turn(text="Back again."),
    )
    child, screen = open_chat(llm_server, workspace, "--yes", rows=ROWS, history=200)
    try:
        child.sendline("two jobs at once")
        for wait in seconds.values():
            wait_until_running(["sleep", wait])
        # the subagents asked at the same moment: which got which command is in the requests
        owner = {}
        for request, call in zip(llm_server.requests[1:3], ("ba", "bb"), strict=True):
            owner[call] = "t1" if "the first job" in str(request.body["messages"]) else "t2"
        assert sorted(owner.values()) == ["t1", "t2"]
        for call, task_id in owner.items():
            mine, theirs = seconds[call], seconds["bb" if call == "ba" else "ba"]
            lines = screen.wait_until(
                panel_holds(f"task job {task_id} (worker)", f"◌ bash $ sleep {mine}"),
                f"{call} under {task_id}",
            )
            assert theirs not in "\n".join(panel(lines, f"task job {task_id} (worker)"))

        child.sendcontrol("c")
        screen.wait_for("■ aborted")
        for wait in seconds.values():
            assert wait_until_gone(["sleep", wait])
        assert len(llm_server.requests) == 3  # no subagent asked again after the stop
        child.sendline("still there?")
        screen.wait_for("Back again.")
        for task_id in ("t1", "t2"):  # still there, on the screen or scrolled above it
            assert f"task job {task_id} (worker)" in screen.seen, screen.seen
        quit_chat(child)
    finally:
        child.close(force=True)
        for wait in seconds.values():
            for pid in processes_with_argv(["sleep", wait]):
                os.kill(pid, 9)


def test_run_s_progress_lists_a_subagent_s_calls_under_its_task_line(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("task", {"description": "look", "prompt": "look"}, "t1"),)),
        Turn(
            tool_calls=(
                ToolCallSpec("read", {"path": "a.txt"}, "r1"),
                ToolCallSpec("read", {"path": "nope.txt"}, "r2"),
            )
        ),
        Turn(text="alpha it is"),
        Turn(text="The answer is alpha."),
    )
    child = pexpect.spawn(
        str(DI_CODE),
        ["run", "--model", "openai/test-model", "what is in a.txt?"],
        cwd=str(tmp_path),
        env=spawn_env(llm_server),
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    screen = Screen(child, 30)
    try:
        lines = screen.wait_for("The answer is alpha.")
    finally:
        child.close(force=True)
    task_line = next(n for n, line in enumerate(lines) if line.startswith("● task look"))
    assert lines[task_line + 1].startswith("  ✓ read a.txt"), lines
    assert lines[task_line + 2].startswith("  ✗ read nope.txt"), lines
