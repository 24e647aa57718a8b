"""The session's hook events in `di-code chat`, in a real pseudo-terminal, each run by a real
hook command: SessionStart (startup, clear), Notification (an approval and a turn's end while
the terminal is not focused), PreCompact (`/compact` with instructions) and SessionEnd (clear,
and leaving with /exit)."""

from __future__ import annotations

import time
from pathlib import Path

from tests.support.chat import TIMEOUT
from tests.support.hooks import events, log_hooks
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.notify import FOCUS_IN, FOCUS_OUT, WAITING, chat, leave


def wait_for_lines(log: Path, count: int) -> list[dict[str, object]]:
    deadline = time.monotonic() + TIMEOUT
    while not (log.exists() and len(events(log)) >= count):
        assert time.monotonic() < deadline, f"fewer than {count} events in {log}"
        time.sleep(0.05)
    return events(log)


def test_every_session_event_reaches_its_hook(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    log = tmp_path / "events.jsonl"
    every = ("SessionStart", "SessionEnd", "Notification", "PreCompact")
    log_hooks(di_code_home, log, dict.fromkeys(every, ""))
    call = ToolCallSpec("bash", {"command": "echo hi"})
    llm_server.script(
        Turn(tool_calls=(call,), first_delay=1.0),
        Turn(text="ran it", first_delay=1.0),
        Turn(text="the summary"),
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    child, out = chat(llm_server, workspace)
    try:
        [start] = wait_for_lines(log, 1)
        child.sendline("run it")
        child.send(FOCUS_OUT)
        out.wait_for("Allow?")
        wait_for_lines(log, 2)
        time.sleep(0.6)  # past the question's guard
        child.send("y")
        out.wait_for("ran it")
        wait_for_lines(log, 3)
        child.send(FOCUS_IN)
        child.sendline("/compact keep the bash part")
        out.wait_for("Compacted")
        child.sendline("/clear")
        out.wait_for("New session")
        leave(child, out)
    finally:
        child.close(force=True)
    told = events(log)
    names = [
        (e["hook_event_name"], e.get("source") or e.get("reason") or e.get("trigger")) for e in told
    ]
    assert names == [
        ("SessionStart", "startup"),
        ("Notification", None),
        ("Notification", None),
        ("PreCompact", "manual"),
        ("SessionEnd", "clear"),
        ("SessionStart", "clear"),
        ("SessionEnd", "prompt_input_exit"),
    ]
    asked, waiting = told[1], told[2]
    assert asked["notification_type"] == "permission_prompt"
    assert asked["message"] == "di-code needs your permission to use bash"
    assert waiting["notification_type"] == "idle_prompt" and waiting["message"] == WAITING
    assert told[3]["custom_instructions"] == "keep the bash part"
    assert start["session_id"] == told[4]["session_id"] != told[5]["session_id"]
    assert told[5]["session_id"] == told[6]["session_id"]
    for event in told:
        assert Path(str(event["transcript_path"])).name.endswith(f"{event['session_id']}.jsonl")
        assert event["cwd"] == str(workspace.resolve())
