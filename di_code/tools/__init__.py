"""The coding tools: read, write, edit, bash, grep, find, ls (SPEC §4).

`default_tools(workspace)` makes fresh instances bound to a workspace; nothing is created at
import time, and the tool modules are imported only when tools are made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from di_code.agent.tool import AgentTool
    from di_code.tools.bash import BashPolicy

READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls"})


def default_tools(
    workspace: Path,
    extra_roots: Sequence[Path] = (),
    read_roots: Sequence[Path] = (),
    bash: BashPolicy | None = None,
) -> list[AgentTool]:
    """read, write, edit, bash, grep, find, ls, confined to `workspace` and `extra_roots`;
    read may also read in `read_roots` (the folders of skills kept outside the workspace);
    `bash` says how commands run (sandbox, hidden variables, spill folder)."""
    from di_code.tools.bash import BashPolicy, BashTool
    from di_code.tools.edit import EditTool
    from di_code.tools.find import FindTool
    from di_code.tools.grep import GrepTool
    from di_code.tools.ls import LsTool
    from di_code.tools.read import ReadTool
    from di_code.tools.workspace import Workspace
    from di_code.tools.write import WriteTool

    space = Workspace.create(workspace, extra_roots)
    readable = Workspace.create(workspace, (*extra_roots, *read_roots)) if read_roots else space
    return [
        ReadTool(readable),
        WriteTool(space),
        EditTool(space),
        BashTool(space, bash or BashPolicy()),
        GrepTool(space),
        FindTool(space),
        LsTool(space),
    ]
