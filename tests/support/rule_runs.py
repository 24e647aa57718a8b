"""A `di-code run` under the user's own permission rules whose model calls tools several times
in one turn: the rules written, the calls scripted, what the model was told of each read back.
For the hostile permission tests (README: Permissions)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


def user_rules(home: Path, allow: Sequence[str] = (), deny: Sequence[str] = ()) -> None:
    """The user's own permission rules, in DI_CODE_HOME's config."""
    (home / "config.toml").write_text(
        f"[permissions]\nallow = {json.dumps(list(allow))}\ndeny = {json.dumps(list(deny))}\n"
    )


def calls(server: LLMServer, tool: str, arguments: list[dict[str, Any]]) -> list[str]:
    """Script one turn calling `tool` once per arguments (ids c0, c1, ...), then an answer."""
    ids = [f"c{n}" for n in range(len(arguments))]
    specs = tuple(ToolCallSpec(tool, args, id) for args, id in zip(arguments, ids, strict=True))
    server.script(Turn(tool_calls=specs), Turn(text="done"))
    return ids


def results(server: LLMServer) -> dict[str, str]:
    """What the model was told of each tool call, by call id (the last request's tool messages)."""
    messages = server.requests[-1].body["messages"]
    return {m["tool_call_id"]: json.dumps(m["content"]) for m in messages if m["role"] == "tool"}
