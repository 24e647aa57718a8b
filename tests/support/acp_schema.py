"""Every message `di-code acp` sends, checked against the official ACP v1 JSON schema
(tests/fixtures/acp/schema.v1.json): each against the schema's `Agent` messages (the requests,
responses and notifications an agent may send), and each answer's result against the response
type of the method it answers (the schema alone would take any result that fits any type)."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

SCHEMA = Path(__file__).resolve().parent.parent / "fixtures" / "acp" / "schema.v1.json"
AGENT_METHODS = {
    "session/update": "SessionNotification",
    "session/request_permission": "RequestPermissionRequest",
    "fs/read_text_file": "ReadTextFileRequest",
    "fs/write_text_file": "WriteTextFileRequest",
    "terminal/create": "CreateTerminalRequest",
    "terminal/output": "TerminalOutputRequest",
    "terminal/release": "ReleaseTerminalRequest",
    "terminal/wait_for_exit": "WaitForTerminalExitRequest",
    "terminal/kill": "KillTerminalRequest",
}
"""The methods ACP v1 gives an agent to call, each with its params' type in the schema (whose
`Agent` messages would also take any method as an extension's)."""


@cache
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return loaded


@cache
def _validator(name: str) -> Any:
    """The validator of the `Agent` messages, or of one `$defs` type."""
    from jsonschema import Draft202012Validator

    schema = _schema()
    if name == "Agent":
        [part] = [branch for branch in schema["anyOf"] if branch.get("title") == name]
    else:
        part = {"$ref": f"#/$defs/{name}"}
    return Draft202012Validator({"$defs": schema["$defs"], **part})


@cache
def response_types() -> dict[str, str]:
    """Method -> the type of its result, as the schema's descriptions name them."""
    result = _schema()["$defs"]["AgentResponse"]["anyOf"][0]["properties"]["result"]
    named = {}
    for option in result["anyOf"]:
        for method in re.findall(r"`([^`]+)` request", option.get("description", "")):
            named[method] = option["title"]
    return named


def schema_problems(message: Any, answering: str | None = None) -> list[str]:
    """Why `message` is not an agent's message in ACP v1, or (`answering` a method) not its
    answer (none: it is)."""
    errors = list(_validator("Agent").iter_errors(message))
    if not isinstance(message, dict):
        return [f"not an object: {message!r}"[:200]]
    if "method" in message:
        params_type = AGENT_METHODS.get(message["method"])
        if params_type is None:
            return [f"{message['method']!r} is no method of an agent in ACP v1"]
        errors += _validator(params_type).iter_errors(message.get("params"))
    expected = response_types().get(answering or "")
    if expected is not None and "result" in message:
        errors += _validator(expected).iter_errors(message["result"])
    return [f"{list(e.absolute_path)}: {e.message[:200]}" for e in errors]


class SentMessages:
    """An SDK connection observer: keeps every message the agent sent, and the method of each
    request the client sent, so that each answer is checked as that method's."""

    def __init__(self) -> None:
        self.messages: list[tuple[dict[str, Any], str | None]] = []
        self._asked: dict[Any, str] = {}

    def __call__(self, event: Any) -> None:
        message = event.message
        if event.direction.value == "outgoing":  # from the client
            if "method" in message and "id" in message:
                self._asked[message["id"]] = message["method"]
        elif "method" in message:
            self.messages.append((message, None))
        else:
            self.messages.append((message, self._asked.get(message.get("id"))))

    def check(self) -> None:
        bad = [(m, p) for m, method in self.messages if (p := schema_problems(m, method))]
        assert not bad, "not ACP v1:\n" + "\n".join(
            f"{json.dumps(m)[:300]}\n  {p[:3]}" for m, p in bad[:5]
        )
