"""Stored data is read defensively: a session line that cannot be used (nested too deep, a
value out of range, a wrong type) is skipped with one warning naming it, and the rest loads:
`run --continue` goes on and `undo --list` lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_run import di_code
from tests.support.llm_server import LLMServer, Turn


def nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = {"a": value}
    return value


def stored_line(session: Path, entry: dict[str, object]) -> int:
    """Append `entry` after the session's last line, as its child; its line number."""
    lines = session.read_text().splitlines()
    last = json.loads(lines[-1])
    entry = {"parent_id": last["id"], **entry}
    session.write_text("\n".join(lines) + "\n" + json.dumps(entry) + "\n")
    return len(lines) + 1


BAD_ENTRIES = {
    "deep arguments": {
        "type": "message", "id": "bad1", "timestamp": 5,
        "message": {
            "role": "assistant", "timestamp": 5, "stop_reason": "tool_use",
            "content": [{"type": "tool_call", "id": "c9", "name": "read",
                         "arguments": nested(800)}],
            "api": "openai-completions", "provider": "openai", "model": "test-model",
        },
    },
    "huge timestamp": {"type": "message", "id": "bad2", "timestamp": 1e30,
                       "message": {"role": "user", "timestamp": 1,
                                   "content": [{"type": "text", "text": "hi"}]}},
    "message time": {"type": "message", "id": "bad4", "timestamp": 1,
                     "message": {"role": "user", "timestamp": 1e30,
                                 "content": [{"type": "text", "text": "hi"}]}},
    "checkpoint time": {
        "type": "checkpoint", "id": "bad3", "timestamp": 1e30, "prompt": 7, "phase": "before",
        "kind": "files", "ref": "7", "title": "far future",
    },
}  # fmt: skip


@pytest.mark.parametrize("name", list(BAD_ENTRIES))
def test_an_unreadable_line_is_one_warning_and_the_rest_loads(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, name: str
) -> None:
    llm_server.script(Turn(text="first answer"))
    assert di_code(di_code_home, llm_server, workspace, "run", "first").returncode == 0
    (session,) = di_code_home.glob("sessions/*/*.jsonl")
    number = stored_line(session, BAD_ENTRIES[name])

    listed = di_code(di_code_home, llm_server, workspace, "undo", "--list")
    assert "Traceback" not in listed.stderr and "internal error" not in listed.stderr
    assert listed.returncode == 0, listed.stderr
    warnings = [line for line in listed.stderr.splitlines() if f"line {number}" in line]
    assert len(warnings) == 1, listed.stderr
    assert session.name in warnings[0]

    llm_server.script(Turn(text="second answer"))
    went_on = di_code(di_code_home, llm_server, workspace, "run", "-c", "go on")
    assert went_on.returncode == 0, went_on.stderr
    assert "second answer" in went_on.stdout
    said = [line for line in went_on.stderr.splitlines() if f"line {number}" in line]
    assert len(said) == 1, went_on.stderr
    sent = json.dumps(llm_server.requests[-1].body)
    assert "first answer" in sent and "go on" in sent


def test_a_stored_lone_surrogate_is_read_as_a_replacement_character(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(text="first answer"))
    assert di_code(di_code_home, llm_server, workspace, "run", "first").returncode == 0
    (session,) = di_code_home.glob("sessions/*/*.jsonl")
    stored_line(
        session,
        {
            "type": "message",
            "id": "odd1",
            "timestamp": 5,
            "message": {
                "role": "user",
                "timestamp": 5,
                "content": [{"type": "text", "text": "odd \ud800 text"}],
            },
        },
    )
    assert "\\ud800" in session.read_text()
    llm_server.script(Turn(text="second answer"))
    went_on = di_code(di_code_home, llm_server, workspace, "run", "-c", "go on")
    assert went_on.returncode == 0, went_on.stderr
    assert went_on.stderr == ""
    assert "odd \ufffd text" in json.dumps(llm_server.requests[-1].body, ensure_ascii=False)
