"""Being told when di-code needs you, read from a real pseudo-terminal's bytes: chat turns on
focus reporting (CSI ?1004h, off again at exit); with the terminal focused (ESC [ I) nothing
rings; with it not focused (ESC [ O) a turn's end and an approval question notify: OSC 9 where
TERM_PROGRAM names a terminal that shows it, OSC 777 for foot and urxvt, else the bell;
`notify = "off"` rings nothing and `notify = COMMAND` runs the user's command instead. The focus
reports themselves type nothing and stop nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.cli.conftest import request_text
from tests.support.chat import DI_CODE, TIMEOUT
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.notify import FOCUS_IN, FOCUS_OUT, WAITING, chat, leave

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def test_a_turn_ends_unseen_with_osc_9_and_seen_with_nothing(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(Turn(text="first answer"), Turn(text="second answer", first_delay=1.0))
    child, out = chat(llm_server, tmp_path, TERM_PROGRAM="iTerm.app")
    try:
        assert "\x1b[?1004h" in out.seen
        child.send(FOCUS_IN)
        child.send(FOCUS_OUT)
        child.send(FOCUS_IN)  # the reports type nothing: the prompt below arrives whole
        child.sendline("say hi")
        out.wait_for("first answer")
        out.settled()
        assert "\x1b]9;" not in out.seen and out.bells() == 0
        child.sendline("again")
        child.send(FOCUS_OUT)  # the user looks elsewhere before the answer comes
        out.wait_for(f"\x1b]9;{WAITING}\x07")
        assert "second answer" in out.seen
        assert out.bells() == 0
        leave(child, out)
    finally:
        child.close(force=True)
    assert "\x1b[?1004l" in out.seen
    first = request_text(llm_server.requests[0].body)
    assert '"say hi"' in first and "[I" not in first and "[O" not in first
    assert len([r for r in llm_server.requests if r.method == "POST"]) == 2


def test_an_approval_waiting_unseen_rings_the_bell_where_osc_is_unknown(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    call = ToolCallSpec("bash", {"command": "echo hi"})
    llm_server.script(Turn(tool_calls=(call,), first_delay=1.0), Turn(text="done"))
    child, out = chat(llm_server, tmp_path)
    try:
        child.sendline("run it")
        child.send(FOCUS_OUT)
        out.wait_for("Allow?")
        out.wait_until(lambda: out.bells() == 1, "the bell")  # rung after what was printed
        assert "\x1b]9;" not in out.seen and "\x1b]777;" not in out.seen
        child.send(FOCUS_IN)
        time.sleep(0.6)  # the question's guard: a key too early is not an answer
        child.send("y")
        out.wait_for("done")
        out.settled()
        assert out.bells() == 1  # focused now: the turn's end rings nothing
        leave(child, out)
    finally:
        child.close(force=True)


def test_foot_gets_osc_777(llm_server: LLMServer, tmp_path: Path) -> None:
    llm_server.script(Turn(text="answer", first_delay=1.0))
    child, out = chat(llm_server, tmp_path, TERM="foot")
    try:
        child.sendline("hi")
        child.send(FOCUS_OUT)
        out.wait_for(f"\x1b]777;notify;di-code;{WAITING}\x07")
        leave(child, out)
    finally:
        child.close(force=True)


def test_notify_off_rings_nothing_and_a_command_runs_instead(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text('notify = "off"\n')
    llm_server.script(Turn(text="quiet answer", first_delay=1.0))
    child, out = chat(llm_server, tmp_path, TERM_PROGRAM="WezTerm")
    try:
        child.sendline("hi")
        child.send(FOCUS_OUT)
        out.wait_for("quiet answer")
        out.settled()
        assert "\x1b]9;" not in out.seen and out.bells() == 0
        leave(child, out)
    finally:
        child.close(force=True)

    told = tmp_path / "told.json"
    command = f"cat > {told}"
    (di_code_home / "config.toml").write_text(f"notify = {json.dumps(command)}\n")
    llm_server.script(Turn(text="loud answer", first_delay=1.0))
    child, out = chat(llm_server, tmp_path, TERM_PROGRAM="WezTerm")
    try:
        child.sendline("hi")
        child.send(FOCUS_OUT)
        out.wait_for("loud answer")
        deadline = time.monotonic() + TIMEOUT
        while not (told.exists() and told.read_text().endswith("}")):
            assert time.monotonic() < deadline, "the notify command never ran"
            out.read(0.1)
        assert "\x1b]9;" not in out.seen and out.bells() == 0
        leave(child, out)
    finally:
        child.close(force=True)
    event = json.loads(told.read_text())
    assert event["hook_event_name"] == "Notification" and event["message"] == WAITING
    assert event["notification_type"] == "idle_prompt"
