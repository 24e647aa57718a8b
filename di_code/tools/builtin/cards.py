"""What the model is told about each built-in tool: its name, description and JSON Schema.

They live apart from the code that runs the tools so that `run` can offer the seven tools
without importing them (their modules are a tenth of its start-up): `default_tools` hands the
agent `LazyTool`s made from these cards, and a tool's module is imported when the model first
calls it. The tool classes take their name and schema from here too, so there is one of each.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class ToolCard(NamedTuple):
    name: str
    description: str
    parameters: dict[str, Any]
    parallel_safe: bool = False
    """Several calls of it in one turn may run at the same time (the loop honours it)."""


BASH_DEFAULT_TIMEOUT = 120
BASH_MAX_TIMEOUT = 600
GREP_DEFAULT_LIMIT = 100
FIND_DEFAULT_LIMIT = 1000
LS_DEFAULT_LIMIT = 500

READ = ToolCard(
    "read",
    description=(
        "Read a file. Text comes back with its lines numbered as `cat -n` prints them: the "
        "line number right-aligned in 6 columns, a tab, then the line as it is in the file. The "
        "numbers are not part of the file; they are the lines that offset, grep and lsp name. At "
        "most 2000 lines or 50 KB of text per call; a notice at the end tells you the offset to "
        "continue from. Use offset and limit to read part of a large file. PNG, JPEG, GIF and "
        "WebP images come back as images. Read a file before editing it."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to read, relative to the working directory (or absolute).",
            },
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "Line number to start at (1-based). Use it to continue a long file.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Maximum number of lines to return.",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)

WRITE = ToolCard(
    "write",
    description=(
        "Write a file: creates it (and its parent folders) or replaces its whole content. "
        "Use it for new files or full rewrites; to change part of an existing file use edit."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to write, relative to the working directory (or absolute).",
            },
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
)

_EDIT_PROPERTIES: dict[str, Any] = {
    "old_text": {
        "type": "string",
        "description": "Exact text to replace, copied from the file with its whitespace "
        "(without read's line numbers); it must occur exactly once (unless replace_all), so "
        "include enough surrounding lines.",
    },
    "new_text": {"type": "string", "description": "The text that replaces old_text."},
    "replace_all": {
        "type": "boolean",
        "description": "Replace every occurrence of old_text, not just one (default false): "
        "a rename in one call.",
    },
}

EDIT = ToolCard(
    "edit",
    description=(
        "Edit a file by exact text replacement. Give `edits`, a list of {old_text, new_text} "
        "(or a single old_text/new_text). Each old_text must match the file exactly once, "
        "whitespace included, unless replace_all is true: then every occurrence is replaced. "
        "Read the file first, and copy its text from after the tab: never the line number and "
        "tab read puts before each line. Several changes to one file go in one call."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to edit, relative to the working directory (or absolute).",
            },
            "edits": {
                "type": "array",
                "minItems": 1,
                "description": "Replacements, each matched against the original file; they must "
                "not overlap. All are applied or none.",
                "items": {
                    "type": "object",
                    "properties": _EDIT_PROPERTIES,
                    "required": ["old_text", "new_text"],
                    "additionalProperties": False,
                },
            },
            **_EDIT_PROPERTIES,
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)

BASH_BACKGROUND = (
    "A background process (`server > server.log 2>&1 &`, its output redirected to a file) "
    "keeps running after the command returns, until di-code exits; stop it (kill) when done."
)
"""Told when commands run unsandboxed; the sandbox says what holds inside it."""

BASH = ToolCard(
    "bash",
    description=(
        "Run a shell command in the working directory (bash -c, stdin closed, stdout and stderr "
        "merged). Returns the last 2000 lines / 50 KB of output; longer output is saved to a file "
        "whose path is given (read it with the read tool). A non-zero exit is reported as an "
        "error. Use it for builds, tests, git and other programs; prefer read, grep, find and "
        "ls for looking at files."
    ),
    parameters={
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "description": "Shell command, run with `bash -c` in the working directory. "
                "Non-interactive: stdin is closed.",
            },
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": BASH_MAX_TIMEOUT,
                "description": "Seconds before the command is killed "
                f"(default {BASH_DEFAULT_TIMEOUT}, max {BASH_MAX_TIMEOUT}).",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    },
)

GREP = ToolCard(
    "grep",
    description=(
        "Search file contents for a regular expression (ripgrep syntax). Returns `path:line: text` "
        "for each matching line (context lines as `path-line- text`). Honours .gitignore. Use glob "
        "to narrow the files and literal=true for plain text with special characters."
    ),
    parameters={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": {
                "type": "string",
                "description": "File or folder to search (default: the working directory).",
            },
            "glob": {
                "type": "string",
                "description": "Only search files matching this glob, "
                "e.g. `*.py` or `src/**/*.ts`.",
            },
            "ignore_case": {"type": "boolean", "description": "Match case-insensitively."},
            "literal": {
                "type": "boolean",
                "description": "Treat pattern as plain text, not a regular expression.",
            },
            "context": {
                "type": "integer",
                "minimum": 0,
                "description": "Lines of context to show before and after each match.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Maximum number of matches (default {GREP_DEFAULT_LIMIT}).",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
)

FIND = ToolCard(
    "find",
    description=(
        "Find files by glob pattern. Returns paths relative to the working directory, one per "
        "line; files ignored by .gitignore are left out. Use it to locate files before reading."
    ),
    parameters={
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Glob: `*.py` matches that name in any folder; with a slash, e.g. "
                "`src/**/*.test.ts`, it matches paths relative to `path`.",
            },
            "path": {
                "type": "string",
                "description": "Folder to search (default: the working directory).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Maximum number of results (default {FIND_DEFAULT_LIMIT}).",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
)

LS = ToolCard(
    "ls",
    description=(
        "List a folder: one entry per line, sorted, dotfiles included, folders marked with a "
        "trailing `/`. Use find to search recursively."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Folder to list (default: the working directory).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Maximum number of entries (default {LS_DEFAULT_LIMIT}).",
            },
        },
        "additionalProperties": False,
    },
)

FETCH_MAX_BYTES = 2 * 1024 * 1024

FETCH = ToolCard(
    "fetch",
    description=(
        "Fetch a web page over HTTP(S) and get it back as Markdown (HTML is converted; plain "
        "text, Markdown and JSON come back as they are). Use it to read documentation, an issue "
        "or an API reference the user points to. At most 2 MB are read, within 30 s; redirects "
        "are followed on the same host only (another host is named for you to fetch). Images, "
        "archives and other binary content are refused. Needs the user's approval."
    ),
    parameters={
        "type": "object",
        "properties": {
            "url": {
                "type": "string",
                "description": "The http:// or https:// URL to fetch.",
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    },
)

TODO_MAX_ITEMS = 50
TODO_STATUSES = ("pending", "in_progress", "completed", "done")
"""`completed` as Claude Code's TodoWrite, Codex's plan and ACP's plan say; `done` as older
sessions say (both are kept as `done`)."""

TODO = ToolCard(
    "todo",
    description=(
        "Keep a short plan for work of several steps, which the user watches: send the whole "
        "list each time (it replaces the last one), each step with its status: pending, "
        "in_progress (one at a time) or completed. Update it as you start and finish steps. "
        "Skip it for a question or a one-step change."
    ),
    parameters={
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "maxItems": TODO_MAX_ITEMS,
                "description": "The plan's steps, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1, "description": "The step."},
                        "status": {"type": "string", "enum": list(TODO_STATUSES)},
                    },
                    "required": ["content", "status"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["todos"],
        "additionalProperties": False,
    },
)

PLAN_MAX_STEPS = TODO_MAX_ITEMS
PLAN = ToolCard(
    "exit_plan_mode",
    description=(
        "Offered in plan mode only: the user wants a plan before anything changes, and every "
        "tool that changes something is refused until then. Explore with the reading tools "
        "first; then call this once with the plan, written for the user to approve (markdown: "
        "what changes where, and how it will be checked). The user approves it (the mode "
        "switches, the plan's steps become your todo list, and you carry it out), asks for "
        "changes (plan on, then call this again), or stops."
    ),
    parameters={
        "type": "object",
        "properties": {
            "plan": {"type": "string", "minLength": 1, "description": "The plan, in markdown."},
            "steps": {
                "type": "array",
                "maxItems": PLAN_MAX_STEPS,
                "items": {"type": "string", "minLength": 1},
                "description": (
                    "The plan's steps in order, a line each: the todo list once approved "
                    "(left out: the plan's top-level list items)."
                ),
            },
        },
        "required": ["plan"],
        "additionalProperties": False,
    },
)

TASK = ToolCard(
    "task",
    description=(
        "Hand a self-contained job (a search across the code, a review, a summary) to a "
        "subagent: a fresh assistant with its own context and, by default, only the read, grep, "
        "find and ls tools. It cannot see this conversation, so the prompt must say everything "
        "it needs and what to report back; its final answer is this tool's result, and its "
        "reading does not fill your context. Several task calls in one turn run in parallel."
    ),
    parameters={
        "type": "object",
        "properties": {
            "description": {
                "type": "string",
                "description": "A short (3-5 words) title of the job, shown to the user.",
            },
            "prompt": {
                "type": "string",
                "minLength": 1,
                "description": "The complete instructions for the subagent.",
            },
            "subagent_type": {
                "type": "string",
                "description": "A custom subagent's name; leave out for the general one.",
            },
        },
        "required": ["description", "prompt"],
        "additionalProperties": False,
    },
    parallel_safe=True,
)
