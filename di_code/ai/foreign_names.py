"""Argument names other coding agents' tools use for the same thing, taken under the tool's own.

A model trained on Claude Code's, opencode's or Codex's tools sends `file_path` (`filePath`)
for `path`, `old_string`/`new_string` (`oldString`/`newString`) for `old_text`/`new_text`,
`replaceAll` for `replace_all`, a plan's `step` for a step's `content`, Claude Code's
`run_in_background` (Gemini CLI's `is_background`) for bash's `background`, and the ids and
text of their job tools (`bash_id`, `shell_id`, Codex's `session_id` and `chars`). Such a name
is renamed only where the schema refuses unknown names, has the tool's own name and lacks the
foreign one, and the call does not give both; names that carry nothing the tool uses (TodoWrite's
`activeForm`, update_plan's `explanation`) are dropped there.
"""

from __future__ import annotations

from typing import Any

RENAMED = {
    "file_path": "path",
    "filePath": "path",
    "old_string": "old_text",
    "oldString": "old_text",
    "new_string": "new_text",
    "newString": "new_text",
    "replaceAll": "replace_all",
    "plan": "todos",
    "step": "content",
    "run_in_background": "background",
    "is_background": "background",
    "bash_id": "job_id",
    "shell_id": "job_id",
    "session_id": "job_id",
    "chars": "text",
}
DROPPED = frozenset({"activeForm", "explanation"})


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
    unchanged = list(out) == list(arguments) and all(out[k] is arguments[k] for k in out)
    return arguments if unchanged else out
