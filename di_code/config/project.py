"""Finding the project's `.di-code/config.toml`, and refusing one another user could have put.

A cloned repository is somebody else's text. Its settings file is looked for only from the
working folder up to the repository root (the nearest folder with `.git`; outside a
repository, the working folder alone), never above: a file planted in a shared parent such as
`/tmp` cannot apply below it. A file, or its `.di-code` folder, owned by another user or
writable by group or others is ignored with a warning, as git refuses such repositories.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import msgspec

PROJECT_CONFIG = Path(".di-code") / "config.toml"


class ProjectFile(msgspec.Struct, frozen=True):
    path: Path
    """The `.di-code/config.toml` found."""
    folder: Path
    """The real path of the project folder holding `.di-code`: what trust is recorded for."""


def project_root(workspace: Path) -> Path:
    """The repository holding `workspace` (nearest folder with `.git`), else `workspace`."""
    for folder in (workspace, *workspace.parents):
        if (folder / ".git").exists():
            return folder
    return workspace


def project_folders(workspace: Path) -> list[Path]:
    """The workspace and its parents up to the repository root, nearest first: where a
    project's own files (commands, skills) are looked for."""
    workspace = workspace.resolve()
    root = project_root(workspace)
    return [workspace, *(p for p in workspace.parents if p.is_relative_to(root))]


def find_project_config(workspace: Path, home: Path) -> ProjectFile | None:
    """The nearest `.di-code/config.toml` from the workspace up to its repository root (never
    the home one, which is read as the user's own)."""
    workspace = workspace.resolve()
    root = project_root(workspace)
    home_config = (home / "config.toml").resolve()
    folder = workspace
    while True:
        candidate = folder / PROJECT_CONFIG
        if candidate.is_file() and candidate.resolve() != home_config:
            return ProjectFile(candidate, folder)
        if folder == root or folder == folder.parent:
            return None
        folder = folder.parent


def unsafe_reason(project: ProjectFile) -> str | None:
    """Why the file must not be read, or None: another user owns it or its folder, or group
    or others may write to either."""
    for path in (project.path, project.path.parent):
        try:
            info = path.stat()
        except OSError as exc:
            return f"cannot check it ({exc.strerror})"
        if info.st_uid != os.getuid():
            return f"{path} belongs to another user"
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return f"{path} is writable by group or others (chmod go-w fixes it)"
    return None
