"""How the language servers join the tools, without loading their client: write and edit
wrapped so their results carry new diagnostics, and the lsp tool, built on its first call."""

from __future__ import annotations

from collections.abc import Sequence

from di_code.agent.tool import AgentTool
from di_code.tools.builtin.support.editor_files import EditorFiles
from di_code.tools.builtin.support.lazy import LazyTool
from di_code.tools.builtin.support.workspace import Workspace
from di_code.tools.lsp.card import LSP_CARD
from di_code.tools.lsp.diagnosed import Diagnosed
from di_code.tools.lsp.manager import LanguageServers

CHANGES_FILES = ("write", "edit")


def with_language_servers(
    tools: Sequence[AgentTool],
    space: Workspace,
    lsp: LanguageServers,
    editor: EditorFiles | None = None,
) -> list[AgentTool]:
    """`editor`: where the files' text is under `di-code acp` (the servers get that text)."""
    wrapped = [Diagnosed(t, space, lsp, editor) if t.name in CHANGES_FILES else t for t in tools]
    lsp_tool = LazyTool(LSP_CARD, "di_code.tools.lsp.tool", "LspTool", space, lsp, editor)
    return [*wrapped, lsp_tool]
