"""Protected paths: the files that make programs run or hold di-code's own state.

A repository's git directory names programs git runs (hooks, filters, fsmonitor), `.di-code/`
and `.mcp.json` name what di-code itself starts (project settings, MCP servers), `.claude/`
holds other agents' settings and hooks, and `DI_CODE_HOME` holds the user's settings, trust
and sessions. Whoever can change one of them can make the user (or di-code) run a program of
their choosing later, outside any sandbox. So inside the sandbox they are read-only
(`sandbox.py`), and the write and edit tools ask before changing them (`protected_path`,
used by the permission gate).

The git directory is found the way git finds it, without running git: the nearest `.git`
at or above the folder, a `.git` file's `gitdir:` line (worktrees, submodules) and that
directory's `commondir` (a worktree's config and hooks live in the main repository's).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from di_code.system.files.opener import open_path
from di_code.tools.common.errors import ToolError
from di_code.tools.common.workspace import Workspace

GIT = ".git"
WHY: dict[str, str] = {
    GIT: "git runs the hooks and filters a git directory names",
    ".di-code": "di-code's project settings",
    ".mcp.json": "the MCP servers di-code starts",
    ".claude": "agent settings and hooks",
}
"""The names protected at the top of each workspace folder, and why."""
HOME_WHY = "di-code's own settings, trust and sessions (DI_CODE_HOME)"
GIT_WHY = WHY[GIT]


def git_dirs(folder: Path) -> list[Path]:
    """The `.git` entry of the repository `folder` lies in, its git directory and common
    directory (real paths, without duplicates); empty outside a repository."""
    for parent in (folder, *folder.parents):
        entry = parent / GIT
        if entry.is_dir():
            return [Path(os.path.realpath(entry))]
        if entry.is_file():
            return list(dict.fromkeys([entry, *_linked_dirs(entry)]))
    return []


def _linked_dirs(git_file: Path) -> Iterator[Path]:
    """The directory a `.git` file points to, and the common directory that one names."""
    first = _first_line(git_file)
    if not first.startswith("gitdir:"):
        return
    git_dir = Path(os.path.realpath(git_file.parent / first.removeprefix("gitdir:").strip()))
    yield git_dir
    common = _first_line(git_dir / "commondir")
    if common:
        yield Path(os.path.realpath(git_dir / common))


def _first_line(path: Path) -> str:
    try:
        with open_path(path) as file:
            return file.readline(4096).decode("utf-8", errors="replace").strip()
    except OSError:
        return ""


def protected_entries(roots: Sequence[Path], di_code_home: Path | None) -> list[tuple[Path, str]]:
    """Every protected path for these workspace folders, with why; some may not exist (then
    none can be made: a `.git` made in a folder, even one inside a repository, would be the
    repository git uses there)."""
    found: dict[Path, str] = {}
    for root in roots:
        for name, why in WHY.items():
            found.setdefault(root / name, why)
        for path in git_dirs(root):
            found.setdefault(path, GIT_WHY)
    if di_code_home is not None:
        found.setdefault(Path(os.path.realpath(di_code_home)), HOME_WHY)
    return list(found.items())


def protected_path(workspace: Workspace, raw: str, di_code_home: Path | None) -> str | None:
    """Why the file a write or edit names is protected (None: it is not). Any `.git`
    component counts (a nested repository's hooks run as surely); a path outside the
    workspace is the tool's to refuse."""
    try:
        path = workspace.locate(raw)[0]
    except ToolError:
        return None
    for root in workspace.roots:
        if path.is_relative_to(root) and GIT in path.relative_to(root).parts:
            return f"{raw} is inside a git directory: {GIT_WHY}"
    for protected, why in protected_entries(workspace.roots, di_code_home):
        real = Path(os.path.realpath(protected))
        if path.is_relative_to(real):
            return f"{raw} is protected: {why}"
    return None
