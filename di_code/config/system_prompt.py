"""The default system prompt, and the context files (AGENTS.md, else CLAUDE.md) it carries.

Context files come from `$DI_CODE_HOME` and from every folder from the repository root (the
nearest folder holding `.git`) down to the workspace, outermost first, so the most specific
instructions come last (a link to a file outside the repository is not one). Each is capped at
64 KB. Those of folders below the workspace are shown
beside a tool result instead, when the model first works there (di_code.setup.nested_context).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from di_code.ai.codec import encodable
from di_code.config.skills import Skill, skills_prompt
from di_code.config.toml_file import ConfigError
from di_code.system.files.opener import open_path, read_path

CONTEXT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
CONTEXT_FILE_CAP = 64 * 1024
PROMPT_FILE_CAP = 16 * 1024 * 1024
"""A `--system-prompt FILE` larger than this is refused (one line, exit 2)."""

_INTRO = """\
You are di-code, a coding agent working in the user's terminal. You help with software work:
reading and changing code, running commands, finding and fixing bugs, explaining code.
You act through tools that run on the user's machine; their results come back to you."""

_TOOL_GUIDES = {
    "read": "read: read a file (text with numbered lines, or an image). Read before you edit; "
    "page long files with offset/limit. It also reads the full output a bash result says it "
    "saved.",
    "write": "write: create a file or replace it whole. Prefer edit for changes to an "
    "existing file.",
    "edit": "edit: replace exact text in a file. Each old_text must match the file exactly "
    "once, including whitespace, and never holds read's line numbers; include enough "
    "surrounding lines to be unique, or set replace_all to change every occurrence (a rename).",
    "bash": "bash: run a shell command in the workspace (tests, builds, git). Commands do not "
    "read stdin; avoid interactive programs. Its description says whether a background "
    "process (`server > log 2>&1 &`) outlives the command.",
    "grep": "grep: search file contents by regular expression (respects .gitignore).",
    "find": "find: list files by glob pattern (respects .gitignore).",
    "ls": "ls: list a folder.",
    "fetch": "fetch: read a web page (documentation, an issue) as Markdown. Use it for a URL "
    "the user gives or one you know holds the answer; it is no search engine.",
    "todo": "todo: keep the plan of a task of several steps, which the user sees; mark steps "
    "in_progress and completed as you go. Skip it for a one-step change.",
    "lsp": "lsp: ask the language servers for definitions, references, hover, symbols and "
    "diagnostics; positions are 1-based line and character, as read's line numbers and "
    "grep's `path:line:` give.",
    "task": "task: hand a self-contained search, review or summary to a subagent with its own "
    "context; give it complete instructions. Several task calls in one reply run in parallel.",
    "job_output": "job_output: read a background job's new output (bash with background: "
    "true starts one), waiting for a pattern such as a server's `listening`.",
    "job_input": "job_input: type into a background job (a REPL started with pty: true).",
    "job_kill": "job_kill: stop a background job and everything it started.",
    "job_list": "job_list: the background jobs, running or ended.",
}

_GUIDELINES = """\
Guidelines:
- Look before you change: read the relevant files and search the code first.
- Make the smallest change that does the job, in the style of the surrounding code.
- Keep going until the task is done and checked: after changing code, run the project's tests
  or a quick check that exercises the change, and fix what fails. Do not stop at a plan or a
  half-made change unless the user asked only for that.
- A declined tool call ("Permission denied: the user declined ...") means stop: do not reach
  the same result another way (another tool, another command); say what you wanted to do and
  wait for the user.
- Paths are relative to the workspace; files outside it cannot be touched.
- When you are done, answer briefly: what you changed, how you checked it, and what you could
  not check (say so plainly; never claim a check you did not run)."""

_READ_ONLY_GUIDELINES = """\
Guidelines:
- Look before you answer: read and search the code rather than guess.
- write, edit and bash are not available here: when the task needs a change, say exactly what
  to change and where.
- A declined tool call ("Permission denied: the user declined ...") means stop and wait for
  the user.
- Paths are relative to the workspace; files outside it cannot be touched.
- Answer briefly, naming files and lines, and say what you could not check."""

_SUBAGENT_GUIDELINES = """\
Guidelines:
- You are a subagent: another assistant handed you one job and sees only your final message.
  Work on your own (you cannot ask questions), with what its instructions say.
- Look before you conclude: read and search the code rather than guess.
- Paths are relative to the workspace; files outside it cannot be touched.
- Your last message is your whole report: complete and self-contained, naming files and lines,
  and saying what you could not find or check."""

_CHANGING_SUBAGENT = """\
- After changing code, run the project's tests or a quick check when you can, and report it."""

CHANGING_TOOLS = frozenset({"write", "edit", "bash"})
"""With none of these the agent changes nothing, and is not told to test its changes."""

_PRECEDENCE = """\
Project instructions follow in <context_file> blocks, from the user's own file and the \
repository's root down to the workspace. Each applies to its folder and everything below it; \
where two disagree, the deeper (more specific) file wins, and the user's request in this \
conversation wins over every file. A folder below the workspace may hold its own AGENTS.md or \
CLAUDE.md: it is shown to you once, beside the result of your first read, edit or write of a \
file there."""


def build_system_prompt(
    *,
    tool_names: Sequence[str],
    workspace: Path,
    home: Path,
    today: date,
    extra_roots: Sequence[Path] = (),
    skills: Sequence[Skill] = (),
    environment: str = "",
    subagent: bool = False,
) -> str:
    """What di-code is, its tools and how to use them, where it works (with `environment`: the
    lines saying the OS, shell, git state, permission mode and sandbox), the skills it may read
    (when it has the read tool) and the context files. A `subagent` has guidelines of its own."""
    tools = [_TOOL_GUIDES.get(name, name) for name in tool_names]
    tool_text = "\n".join(f"- {line}" for line in tools) if tools else "- (no tools: answer only)"
    roots = "".join(f"\nAlso allowed: {root}" for root in extra_roots)
    where = f"Workspace: {workspace}{roots}\nToday's date: {today.isoformat()}"
    parts = [
        _INTRO,
        f"Available tools:\n{tool_text}",
        _guidelines(tool_names, subagent),
        f"{where}\n{environment}" if environment else where,
    ]
    if skills and "read" in tool_names:
        parts.insert(3, skills_prompt(skills))
    return with_context_files("\n\n".join(parts), home, workspace)


def with_context_files(prompt: str, home: Path, workspace: Path) -> str:
    """`prompt` followed by the context files and the sentence on their precedence: the
    default prompt's end, and a `--system-prompt`'s too (it replaces di-code's words, not the
    project's rules)."""
    files = context_files(home, workspace)
    parts = [prompt, _PRECEDENCE] if files else [prompt]
    parts.extend(context_block(path, text) for path, text in files)
    return encodable("\n\n".join(parts))  # a folder's name that is not UTF-8: U+FFFD


def _guidelines(tool_names: Sequence[str], subagent: bool) -> str:
    reads_only = CHANGING_TOOLS.isdisjoint(tool_names)
    if not subagent:
        return _READ_ONLY_GUIDELINES if reads_only else _GUIDELINES
    return _SUBAGENT_GUIDELINES if reads_only else f"{_SUBAGENT_GUIDELINES}\n{_CHANGING_SUBAGENT}"


def repository_root(workspace: Path) -> Path:
    """The nearest folder at or above the workspace holding `.git`; the workspace if none."""
    for folder in (workspace, *workspace.parents):
        if (folder / ".git").exists():
            return folder
    return workspace


def context_files(home: Path, workspace: Path) -> list[tuple[Path, str]]:
    """(path, text) of each context file, home first, then root down to the workspace."""
    workspace = workspace.resolve()
    root = repository_root(workspace)
    between = reversed(workspace.relative_to(root).parents)  # ".", "a", "a/b", ...
    folders = [home, *(root / part for part in between), workspace]
    found: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for folder in _unique(folders):
        path = context_file_in(folder, None if folder == home else root)
        if path is not None and path.resolve() not in seen:
            seen.add(path.resolve())
            found.append((path, read_context_file(path)))
    return found


def _unique(folders: list[Path]) -> list[Path]:
    return list(dict.fromkeys(folders))


def context_block(path: Path | str, text: str) -> str:
    return f'<context_file path="{path}">\n{text}\n</context_file>'


def context_file_in(folder: Path, inside: Path | None = None) -> Path | None:
    """The folder's AGENTS.md, else its CLAUDE.md, else None. With `inside` (a repository's
    folder), a file that is a link to a file outside it does not count: a repository's
    `AGENTS.md -> ~/.ssh/id_ed25519` would send the key to the model's provider."""
    for name in CONTEXT_FILE_NAMES:
        path = folder / name
        if path.is_file() and (inside is None or path.resolve().is_relative_to(inside)):
            return path
    return None


def read_context_file(path: Path) -> str:
    """The file's text, cut at CONTEXT_FILE_CAP (or why it could not be read)."""
    try:
        with open_path(path) as handle:
            data = handle.read(CONTEXT_FILE_CAP + 1)
    except OSError as exc:
        return f"[could not read: {exc.strerror}]"
    text = data[:CONTEXT_FILE_CAP].decode("utf-8", errors="replace")
    return text + "\n[truncated at 64 KB]" if len(data) > CONTEXT_FILE_CAP else text


def prompt_text(value: str) -> str:
    """`--system-prompt` and `--append-system-prompt` take text or the path of a file."""
    path = Path(value).expanduser()
    if len(value) >= 4096 or "\n" in value or path.is_dir() or not os.path.lexists(path):
        return value
    try:  # a file named but not readable (a FIFO, too large) is said, never sent as its path
        return read_path(path, PROMPT_FILE_CAP).decode("utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
