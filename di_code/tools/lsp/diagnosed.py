"""write and edit with the language servers' verdict: the result of a change to a file a
server serves carries the errors and warnings the change introduced (and says which it
fixed), in the text the model reads and in `details["diagnostics"]` for the UIs and the
JSON output. One wrapper for every tool that changes a file, so no tool calls servers itself.
"""

from __future__ import annotations

from typing import Any

from di_code.agent.tool import ToolOutput, ToolResult, ToolUpdate
from di_code.ai.types import TextContent
from di_code.system.abort import AbortSignal
from di_code.tools.builtin.support.editor_files import EditorFiles
from di_code.tools.common.errors import ToolError
from di_code.tools.common.workspace import Workspace
from di_code.tools.lsp.manager import LanguageServers, Stopped, abortable
from di_code.tools.lsp.report import changes, details, summary


class Diagnosed:
    """`tool` (write or edit), followed by the servers' diagnostics of the file it changed."""

    __slots__ = ("_editor", "_tool", "_workspace", "lsp")

    def __init__(
        self,
        tool: Any,
        workspace: Workspace,
        lsp: LanguageServers,
        editor: EditorFiles | None = None,
    ) -> None:
        self._tool, self._workspace, self.lsp, self._editor = tool, workspace, lsp, editor

    @property
    def wrapped(self) -> Any:
        """The tool itself (agent.tool.unwrapped): what it is is read there, not here."""
        return self._tool

    @property
    def name(self) -> str:
        return str(self._tool.name)

    @property
    def description(self) -> str:
        return str(self._tool.description)

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self._tool.parameters)

    @property
    def parallel_safe(self) -> bool:
        return bool(getattr(self._tool, "parallel_safe", False))

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal,
        on_update: ToolUpdate | None = None,
    ) -> ToolOutput:
        try:
            path, shown = self._workspace.locate(str(params.get("path", "")))
        except ToolError:
            path = None  # the tool says what is wrong with the path
        if path is None or not self.lsp.serves(path):
            alone: ToolOutput = await self._tool.execute(tool_call_id, params, signal, on_update)
            return alone
        try:
            before = await abortable(self.lsp.baseline(path, self._editor), signal)
        except Stopped:
            raise ToolError("Stopped before the change; the file is unchanged") from None
        output: ToolOutput = await self._tool.execute(tool_call_id, params, signal, on_update)
        try:
            old, new, unsure = await abortable(self.lsp.changed(path, before, self._editor), signal)
        except Stopped:
            return output  # the change is made; its diagnostics are not waited for
        introduced, fixed = changes(old, new)
        lines = [summary(shown, introduced, fixed, unsure), *self.lsp.take_notes()]
        text = "\n".join(line for line in lines if line)
        result = output if isinstance(output, ToolResult) else ToolResult(list(output))
        kept = result.details if isinstance(result.details, dict) else {}
        content = [*result.content, TextContent("\n" + text)] if text else result.content
        return ToolResult(content, {**kept, **details(shown, introduced, fixed)}, result.is_error)
