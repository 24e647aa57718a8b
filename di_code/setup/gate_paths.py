"""How the permission gate reads a path a tool names: whether it is protected (the gate asks
then, README "Permissions"), and which file it names, so that a file rule holds for every
spelling of its file (`@a.py`, `/work/a.py`, a link to it), found as the file tools find it."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from pathlib import Path


def gate_paths(
    workspace: Path, roots: Sequence[Path], home: Path
) -> tuple[Callable[[str], str | None], Callable[[str], str]]:
    """Why a path the write or edit tool names is protected (None: it is not), and where a
    path names a file: its real path (a path outside the workspace, which the tools refuse, as
    written, normalised)."""
    from di_code.tools.common.errors import ToolError
    from di_code.tools.common.workspace import Workspace
    from di_code.tools.process.protected import protected_path

    space = Workspace.create(workspace, roots)

    def place(raw: str) -> str:
        try:
            return str(space.locate(raw)[0])
        except ToolError:
            return posixpath.normpath(raw)

    return (lambda raw: protected_path(space, raw, home)), place
