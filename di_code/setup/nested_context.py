"""The context files of folders below the workspace, shown when the model first works there.

The system prompt carries AGENTS.md (else CLAUDE.md) from the repository root down to the
workspace. A subfolder's own file (`pkg/AGENTS.md`) applies to the files below it, so it is
appended to the result of the first read, edit or write of a file under that folder, once per
conversation (the main model's and each subagent's apart: one does not see what the other
was shown), outermost folder first (the system prompt says deeper files win). Like the
others it is read whether or not the project is trusted: it is text for the model, which the
permission mode and the sandbox stand between, as for anything else the model reads.
"""

from __future__ import annotations

from pathlib import Path
from weakref import WeakKeyDictionary

from di_code.agent.tool import ToolResult
from di_code.agent.tool_call import ToolCallContext
from di_code.ai.types import TextContent
from di_code.config.system_prompt import context_block, context_file_in, read_context_file
from di_code.system.names import one_line
from di_code.tools.common.errors import ToolError
from di_code.tools.common.workspace import Workspace

FILE_TOOLS = frozenset({"read", "edit", "write"})


class NestedContextFiles:
    """An after-tool-call hook; remembers, per conversation, the folders it has looked at."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = Workspace.create(workspace)
        self._seen: WeakKeyDictionary[object, set[Path]] = WeakKeyDictionary()
        """Per conversation (ToolCallContext.conversation), the folders already looked at
        (their file shown, or none there): what a subagent was shown, the main model was not."""
        self._seen_outside: set[Path] = set()
        """The same for calls made outside any conversation."""

    async def after(self, context: ToolCallContext, result: ToolResult) -> ToolResult:
        path = context.params.get("path")
        if context.tool.name not in FILE_TOOLS or result.is_error or not isinstance(path, str):
            return result
        seen = self._seen_in(context.conversation)
        notes = [  # the folder is the repository's to name: a newline there forges no line
            context_block(one_line(str(found)), read_context_file(found))
            for found in self._new(path, seen)
        ]
        if not notes:
            return result
        note = "Instructions for this folder (they apply below it and win over outer ones):"
        text = "\n\n".join([note, *notes])
        return ToolResult([*result.content, TextContent(text)], result.details, result.is_error)

    def _seen_in(self, conversation: object) -> set[Path]:
        if conversation is None:
            return self._seen_outside
        return self._seen.setdefault(conversation, set())

    def _new(self, raw: str, seen: set[Path]) -> list[Path]:
        """The context files of the folders between the workspace (excluded) and the file's
        folder not in `seen` (which they join), outermost first."""
        try:
            real, _ = self.workspace.locate(raw)
        except ToolError:
            return []
        root = self.workspace.root
        if not real.parent.is_relative_to(root) or real.parent == root:
            return []
        folders = [*reversed(real.parent.relative_to(root).parents), real.parent.relative_to(root)]
        found = []
        for part in folders:
            folder = root / part
            if folder == root or folder in seen:
                continue
            seen.add(folder)
            file = context_file_in(folder, root)  # a link out of the workspace is none
            if file is not None:
                found.append(file)
        return found
