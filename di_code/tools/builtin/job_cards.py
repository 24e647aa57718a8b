"""What the model is told about the job tools, which read, feed, stop and list the background
jobs bash starts (`background: true`): their names, descriptions and JSON Schemas, as
`cards.py` says the other built-in tools'."""

from __future__ import annotations

from typing import Any

from di_code.tools.builtin.cards import BASH_MAX_TIMEOUT, ToolCard

JOB_ID: dict[str, Any] = {
    "type": "integer",
    "minimum": 1,
    "description": "The job's id, as bash (background: true) or job_list gave it.",
}
JOB_WAIT_MAX = BASH_MAX_TIMEOUT
_JOB_WAIT: dict[str, Any] = {
    "type": "number",
    "minimum": 0,
    "maximum": JOB_WAIT_MAX,
    "description": "Seconds to wait (default 0, max 600): for `pattern` to appear in the new "
    "output when given, else for the job to exit. Returns as soon as it does.",
}
_JOB_PATTERN: dict[str, Any] = {
    "type": "string",
    "description": "A regular expression (Python syntax) to wait for in the new output, "
    "line by line: a server's `listening`, a prompt's `>>> $`.",
}

JOB_OUTPUT = ToolCard(
    "job_output",
    description=(
        "Read a background job's output that is new since the last read (the last 2000 lines "
        "/ 50 KB of it; the whole output is kept in a file whose path is given), and whether "
        "it still runs or how it ended. With wait (and pattern) it waits first: for a server "
        "to say it listens, for tests to finish."
    ),
    parameters={
        "type": "object",
        "properties": {"job_id": JOB_ID, "wait": _JOB_WAIT, "pattern": _JOB_PATTERN},
        "required": ["job_id"],
        "additionalProperties": False,
    },
)

JOB_INPUT = ToolCard(
    "job_input",
    description=(
        "Type text into a background job's stdin (its terminal, for a job started with pty: "
        "true), then return the output that follows, as job_output does. Include `\\n` to "
        "press Enter. eof: true closes stdin after the text (not for a pty job)."
    ),
    parameters={
        "type": "object",
        "properties": {
            "job_id": JOB_ID,
            "text": {"type": "string", "description": "What to type, as is."},
            "eof": {"type": "boolean", "description": "Close the job's stdin afterwards."},
            "wait": {
                **_JOB_WAIT,
                "description": "Seconds to wait for output after typing (default 1, max "
                "600): until `pattern` appears when given, else for the first output.",
            },
            "pattern": _JOB_PATTERN,
        },
        "required": ["job_id", "text"],
        "additionalProperties": False,
    },
)

JOB_KILL = ToolCard(
    "job_kill",
    description=(
        "Stop a background job: its whole process tree (SIGTERM, then SIGKILL after 2 s). "
        "Returns how it ended and its last lines."
    ),
    parameters={
        "type": "object",
        "properties": {"job_id": JOB_ID},
        "required": ["job_id"],
        "additionalProperties": False,
    },
)

JOB_LIST = ToolCard(
    "job_list",
    description="List this session's background jobs: id, state, command, unread output.",
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
)
