"""The default system prompt, and the context files (AGENTS.md, else CLAUDE.md) it carries.

Context files come from `$DI_CODE_HOME` and from every folder from the repository root (the
nearest folder holding `.git`) down to the workspace, outermost first, so the most specific
instructions come last. Each is capped at 64 KB.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

from di_code.ai.codec import encodable
from di_code.ai.files.door import open_path, read_path
from di_code.config.skills import Skill, skills_prompt

CONTEXT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
CONTEXT_FILE_CAP = 64 * 1024
PROMPT_FILE_CAP = 16 * 1024 * 1024
"""A `--system-prompt FILE` larger than this is not read (the text is taken as given)."""

_INTRO = """\
You are di-code, a coding agent working in the user's terminal. You help with software work:
reading and changing code, running commands, finding and fixing bugs, explaining code.
You act through tools that run on the user's machine; their results come back to you."""

_TOOL_GUIDES = {
    "read": "read: read a file (text, or an image). Read before you edit; page long files "
    "with offset/limit.",
    "write": "write: create a file or replace it whole. Prefer edit for changes to an "
    "existing file.",
    "edit": "edit: replace exact text in a file. Each old_text must match the file exactly "
    "once, including whitespace; include enough surrounding lines to be unique.",
    "bash": "bash: run a shell command in the workspace (tests, builds, git). Commands do not "
    "read stdin; avoid interactive programs and long-running servers.",
    "grep": "grep: search file contents by regular expression (respects .gitignore).",
    "find": "find: list files by glob pattern (respects .gitignore).",
    "ls": "ls: list a folder.",
    "task": "task: hand a self-contained search, review or summary to a subagent with its own "
    "context; give it complete instructions. Several task calls in one reply run in parallel.",
}

_GUIDELINES = """\
Guidelines:
- Look before you change: read the relevant files and search the code first.
- Make the smallest change that does the job, in the style of the surrounding code.
- After changing code, run the project's tests or a quick check when you can.
- Paths are relative to the workspace; files outside it cannot be touched.
- When you are done, answer briefly: what you did and anything the user must know."""


def build_system_prompt(
    *,
    tool_names: Sequence[str],
    workspace: Path,
    home: Path,
    today: date,
    extra_roots: Sequence[Path] = (),
    skills: Sequence[Skill] = (),
) -> str:
    """What di-code is, its tools and how to use them, where it works, the skills it may read
    (when it has the read tool) and the context files."""
    tools = [_TOOL_GUIDES.get(name, name) for name in tool_names]
    tool_text = "\n".join(f"- {line}" for line in tools) if tools else "- (no tools: answer only)"
    roots = "".join(f"\nAlso allowed: {root}" for root in extra_roots)
    parts = [
        _INTRO,
        f"Available tools:\n{tool_text}",
        _GUIDELINES,
        f"Workspace: {workspace}{roots}\nToday's date: {today.isoformat()}",
    ]
    if skills and "read" in tool_names:
        parts.insert(3, skills_prompt(skills))
    parts.extend(
        f'<context_file path="{path}">\n{text}\n</context_file>'
        for path, text in context_files(home, workspace)
    )
    return encodable("\n\n".join(parts))  # a folder's name that is not UTF-8: U+FFFD


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
        path = _context_file_in(folder)
        if path is not None and path.resolve() not in seen:
            seen.add(path.resolve())
            found.append((path, _read_capped(path)))
    return found


def _unique(folders: list[Path]) -> list[Path]:
    return list(dict.fromkeys(folders))


def _context_file_in(folder: Path) -> Path | None:
    for name in CONTEXT_FILE_NAMES:
        if (folder / name).is_file():
            return folder / name
    return None


def _read_capped(path: Path) -> str:
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
    try:
        if len(value) < 4096 and "\n" not in value and path.is_file():
            return read_path(path, PROMPT_FILE_CAP).decode("utf-8", errors="replace")
    except OSError:
        pass
    return value
