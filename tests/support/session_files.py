"""What a di-code process saved in its session files, read the way a test checks it."""

from __future__ import annotations

import json
from pathlib import Path


def saved_stop_reasons(home: Path) -> list[str]:
    """The stop reason of each assistant message saved under `home`'s sessions, in order."""
    reasons = []
    for path in home.glob("sessions/*/*.jsonl"):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if entry.get("type") == "message" and entry["message"].get("role") == "assistant":
                reasons.append(entry["message"].get("stop_reason", "stop"))
    return reasons


KEY = "sk-export-secret-0123456789abcdef"
"""A key planted in a saved tool result, to be hidden by every export."""
LEAKS = '<img src="http://leak.invalid/img.png"><link rel="stylesheet" href="http://leak.invalid/x.css">'
"""Markup that would make a browser fetch, were it not shown as text."""


def every_kind_session(home: Path, workspace: Path) -> Path:
    """A saved session with every kind of entry an export draws: a prompt with an image,
    thinking, an answer, tool calls (a command whose output holds markup, a fence and a key;
    an edit with its diff; a failed call; a subagent's calls; a call cut off before its
    result; a tool whose name holds an escape), a model change, a compaction, a failed answer
    and an aborted one. Written without the key registered, so the file holds it."""
    from di_code.ai.types import (
        AssistantMessage,
        ImageContent,
        TextContent,
        ThinkingContent,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )
    from di_code.session import SessionStore

    def answer(*content: object, stop: str = "stop", error: str | None = None) -> AssistantMessage:
        return AssistantMessage(
            list(content),  # type: ignore[arg-type]
            "openai",
            "test-model",
            stop_reason=stop,  # type: ignore[arg-type]
            error_message=error,
        )

    def result(call_id: str, name: str, text: str, **more: object) -> ToolResultMessage:
        return ToolResultMessage(call_id, name, [TextContent(text)], **more)  # type: ignore[arg-type]

    session = SessionStore(home).create(workspace, "chat")
    session.append_model_change("openai", "test-model")
    prompt = [
        TextContent("Fix <b>the</b> parser & run the tests"),
        ImageContent("aGk=", "image/png"),
    ]
    session.append_message(UserMessage(prompt))  # type: ignore[arg-type]
    session.append_message(
        answer(
            ThinkingContent("THINKING-MARK the parser is in app.py"),
            TextContent("ANSWER-MARK I will run `pytest` first."),
            ToolCall("c1", "bash", {"command": "cat page.html"}),
        )
    )
    output = (
        f"<script>document.title='pwned'</script>\n{LEAKS}\n````\nfence inside\n````\nkey={KEY}\n"
    )
    session.append_message(result("c1", "bash", output))
    diff = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-old_line = 1\n+new_line = 2\n"
    session.append_message(answer(ToolCall("c2", "edit", {"path": "app.py"})))
    session.append_message(result("c2", "edit", "Edited app.py", details={"diff": diff}))
    session.append_message(answer(ToolCall("c3", "read", {"path": "missing.py"})))
    session.append_message(result("c3", "read", "READ-FAILED no such file", is_error=True))
    nested = {
        "tool_calls": [{"name": "grep", "arguments": {"pattern": "NESTED-MARK"}, "is_error": False}]
    }
    session.append_message(answer(ToolCall("c4", "task", {"description": "look around"})))
    session.append_message(result("c4", "task", "SUBAGENT-MARK found it", details=nested))
    session.append_message(answer(ToolCall("c5", "bad\x1b[31mname", {"x": 1})))
    session.append_message(result("c5", "bad\x1b[31mname", "escape tool ran"))
    session.append_compaction("SUMMARY-MARK the story so far", None, 1234)
    session.append_message(UserMessage([TextContent("second prompt")]))
    session.append_message(answer(error="ERROR-MARK 500 from the server", stop="error"))
    session.append_message(answer(ToolCall("c6", "bash", {"command": "sleep 100"}), stop="aborted"))
    session.release()
    return session.path
