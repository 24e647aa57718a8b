"""The environment block of the system prompt: OS, shell, git state, permission mode, sandbox.

The git state is where the work tree is (`git rev-parse --show-toplevel`, which the prompts'
checkpoints then take from here) and one `git status --branch --porcelain`, both through the
safe git runner (never a program the repository names), cut to a few lines and to
STATUS_TIMEOUT; it runs on a worker thread while the rest of the session is set up, so
start-up does not wait for it.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from di_code.session.git_run import GitError, found_top_and_refs, run_git
from di_code.system.names import one_line

if TYPE_CHECKING:
    from di_code.tools.process.sandbox import Sandbox

STATUS_LINES = 10
"""Changed paths shown; the rest are counted."""
STATUS_TIMEOUT = 5.0
"""A status slower than this (a huge tree on a slow disk) is not waited for: the prompt says
the state is unknown."""
_LINE_CAP = 200
NO_REPOSITORY = "Git: not a git repository"


class GitState(NamedTuple):
    text: str
    """`Git: branch main; working tree clean`, or the branch and a short status; says when
    there is no repository."""
    top: Path | None
    """The top of the work tree the workspace is in (None: not in one), which the prompts'
    checkpoints take from here instead of asking git again..."""
    found: bool = True
    """... when git said it (not when it failed to: they then ask it themselves)."""
    refs: dict[str, str] | None = None
    """The refs under `refs_prefix` (name -> object), listed by the git process that found
    `top`, for the same checkpoints (None: not asked, or not known)."""
    refs_prefix: str = ""


def git_state(workspace: Path, refs_prefix: str = "") -> GitState:
    """Where the workspace's work tree is (and the refs under `refs_prefix`, if given: the
    session's snapshots'), then its status: outside git one probe is all."""
    top: Path | None = None
    refs: dict[str, str] | None = None
    try:
        found = found_top_and_refs(workspace, refs_prefix, timeout=STATUS_TIMEOUT)
        if found is None:
            return GitState(NO_REPOSITORY, None)
        top, refs = found
        command = ["status", "--branch", "--porcelain=v1", "--ignore-submodules"]
        out = run_git(workspace, command, timeout=STATUS_TIMEOUT)
    except GitError as exc:
        if _outside_git(exc):
            return GitState(NO_REPOSITORY, None)
        unknown = f"Git: state unknown ({str(exc)[:_LINE_CAP]})"
        return GitState(unknown, top, top is not None, refs, refs_prefix)
    # git's lines end at LF alone: a branch or a name may hold U+2028 or NEL (splitlines()
    # would end a line there, and the rest would read as a line of the block)
    lines = out.decode("utf-8", errors="surrogateescape").removesuffix("\n").split("\n")
    head = _head(lines[0][3:] if lines[0].startswith("## ") else "unknown")
    changes = [one_line(line[:_LINE_CAP]) for line in lines[1:]]
    if not changes:
        return GitState(f"Git: {head}; working tree clean", top, True, refs, refs_prefix)
    shown = "\n".join(f"  {line}" for line in changes[:STATUS_LINES])
    more = len(changes) - STATUS_LINES
    rest = f"\n  ... and {more} more" if more > 0 else ""
    status = f"{len(changes)} changed (as git status --short)"
    return GitState(f"Git: {head}; {status}:\n{shown}{rest}", top, True, refs, refs_prefix)


def _outside_git(exc: GitError) -> bool:
    """Whether git's own reason is "not a git repository": those words in a path its message
    names (a folder so called, of another owner) are not."""
    return str(exc).partition(" failed: ")[2].startswith("fatal: not a git repository")


def _head(branch: str) -> str:
    """`branch main`, from the first line of `git status --branch --porcelain` (without `## `),
    which says an unborn branch (`No commits yet on main`, before git 2.17 `Initial commit on
    main`) and a detached HEAD (`HEAD (no branch)`) in words of its own. The name is shown
    on one line, its control characters and line breaks escaped (`one_line`)."""
    for unborn in ("No commits yet on ", "Initial commit on "):
        if branch.startswith(unborn):
            return f"branch {one_line(branch.removeprefix(unborn)[:_LINE_CAP])} (no commits yet)"
    if branch == "HEAD (no branch)":
        return "detached HEAD"
    return f"branch {one_line(branch[:_LINE_CAP])}"


MODES = {
    "ask": "read, grep, find, ls, todo and the job tools but job_input run; the user approves "
    "each call of the other tools",
    "accept-edits": "write and edit run too; the user approves each bash and fetch call",
    "auto": "every tool runs without asking",
    "read-only": "only reading tools are offered",
    "plan": "only reading tools run: explore, then present your plan with exit_plan_mode; "
    "nothing changes until the user approves it",
}


def environment_block(git: str, permission_mode: str, sandbox: Sandbox | None) -> str:
    """The lines after the workspace's: what the model would otherwise have to guess.
    `sandbox` is bash's at start (None: off); the bash tool's description follows it as the
    permission mode changes."""
    system = f"{platform.system()} {platform.release()}".strip()
    if sandbox is None:
        confined = "off (bash commands run with the user's rights and network)"
    else:
        confined = f"{sandbox.mode}, network {'allowed' if sandbox.network else 'off'}"
    mode = MODES.get(permission_mode, "")
    return (
        f"OS: {system}\nShell: bash (the bash tool runs `bash -c`)\n{git}\n"
        f"Permission mode: {permission_mode} ({mode})\n"
        f"Sandbox: {confined}; the bash tool's description always says which holds now"
    )
