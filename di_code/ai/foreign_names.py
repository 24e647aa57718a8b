"""Argument names other coding agents' tools use for the same thing, taken under the tool's own.

A model trained on Claude Code's or Codex's tools sends `file_path` for `path`,
`old_string`/`new_string` for `old_text`/`new_text`, a plan's `step` for a step's `content`.
Such a name is renamed only where the schema refuses unknown names, has the tool's own name and
lacks the foreign one, and the call does not give both; names that carry nothing the tool uses
(TodoWrite's `activeForm`, update_plan's `explanation`) are dropped there. What cannot be
taken is said in the error, with what to send instead (`HINTS`).
"""

from __future__ import annotations

from typing import Any

RENAMED = {
    "file_path": "path",
    "old_string": "old_text",
    "new_string": "new_text",
    "plan": "todos",
    "step": "content",
}
DROPPED = frozenset({"activeForm", "explanation"})
HINTS = {
    "replace_all": "each old_text replaces one exact match: to change every occurrence, send "
    "one edit per occurrence (in `edits`), each with enough context to match once",
}


def adopt(schema: dict[str, Any], arguments: Any) -> Any:
    """`arguments` with the foreign names renamed or dropped, as deep as the schema describes
    objects (an array's items too); the same object when nothing changed."""
    if isinstance(arguments, list) and isinstance(schema.get("items"), dict):
        items = [adopt(schema["items"], item) for item in arguments]
        changed = any(new is not old for new, old in zip(items, arguments, strict=True))
        return items if changed else arguments
    properties = schema.get("properties")
    if not isinstance(arguments, dict) or not isinstance(properties, dict):
        return arguments
    closed = schema.get("additionalProperties") is False
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        own = RENAMED.get(name)
        if closed and name not in properties and name in DROPPED:
            continue
        if closed and name not in properties and own in properties and own not in arguments:
            name = own
        sub = properties.get(name)
        out[name] = adopt(sub, value) if isinstance(sub, dict) else value
    if closed and arguments.get("replace_all") is False and "replace_all" not in properties:
        del out["replace_all"]  # the default: one match
    unchanged = list(out) == list(arguments) and all(out[k] is arguments[k] for k in out)
    return arguments if unchanged else out


def hints(schema: dict[str, Any], arguments: Any) -> list[str]:
    """What to send instead of a name the tool does not have and that could not be taken."""
    if not isinstance(arguments, dict):
        return []
    own = schema.get("properties") or {}
    return [
        f"  - /{name}: {text}"
        for name, text in HINTS.items()
        if name in arguments and name not in own
    ]
