"""A large, realistic session file for benchmarks (resuming a 10,000-message session).

The conversation repeats one coding turn: a user prompt, an assistant tool call, its result,
and an assistant answer, with usage on the assistant messages, as a real session would have.
"""

from __future__ import annotations

from pathlib import Path

from di_code.ai.types import (
    AssistantMessage,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from di_code.session import jsonl
from di_code.session.format import MessageEntry, entry_to_dict
from di_code.session.store import SessionStore


def _turn(index: int, timestamp: int) -> list[Message]:
    call_id = f"call_{index}"
    path = f"src/module_{index % 50}.py"
    return [
        UserMessage(
            [TextContent(f"Step {index}: look at {path} and fix the failing test.")], timestamp
        ),
        AssistantMessage(
            [TextContent("Reading the file."), ToolCall(call_id, "read", {"path": path})],
            "faux",
            "faux-1",
            Usage(input=1_000 + index, output=40, total_tokens=1_040 + index),
            "tool_use",
            timestamp,
        ),
        ToolResultMessage(
            call_id,
            "read",
            [TextContent("def f(x):\n    return x + 1\n" * 20)],
            timestamp=timestamp,
        ),
        AssistantMessage(
            [TextContent(f"Fixed {path}: the off-by-one in f is gone. " * 3)],
            "faux",
            "faux-1",
            Usage(input=1_500 + index, output=60, total_tokens=1_560 + index),
            "stop",
            timestamp,
        ),
    ]


def make_session_file(home: Path, cwd: Path, messages: int = 10_000) -> Path:
    """Write a session of `messages` messages for `cwd` under `home`; return its path."""
    session = SessionStore(home).create(cwd)
    lines = [jsonl.encode(session.header.to_dict())]
    parent: str | None = None
    timestamp = session.header.timestamp
    written = 0
    index = 0
    while written < messages:
        for message in _turn(index, timestamp)[: messages - written]:
            entry = MessageEntry(f"{written:012x}", parent, timestamp, message)
            lines.append(jsonl.encode(entry_to_dict(entry)))
            parent = entry.id
            written += 1
        index += 1
    session.path.parent.mkdir(parents=True, exist_ok=True)
    session.path.write_bytes(b"".join(lines))
    return session.path
