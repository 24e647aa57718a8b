"""Real language servers from PyPI (basedpyright, ruff server, both in the dev extra): the
diagnostics an edit introduces and fixes, and definition and references across an alias and
a re-export, where grep would miss them. Skipped, with the reason, where not installed."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from di_code.agent import AgentTool, ToolResult
from di_code.tools import default_tools
from di_code.tools.lsp.manager import LanguageServers
from di_code.tools.lsp.servers import catalog
from di_code.tools.lsp.spawn import ServerStarter
from tests.support.lsp import BIN, installed, needs_basedpyright
from tests.tools.conftest import run

needs_ruff = pytest.mark.skipif(not installed("ruff"), reason="ruff is not installed (pip)")


def text(result: ToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@pytest.fixture
async def tools_with(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[dict[str, object]]:
    """`tools_with["make"](*names)`: the tools with only the named presets turned on."""
    monkeypatch.setenv("PATH", BIN + os.pathsep + os.environ.get("PATH", ""))
    made: list[LanguageServers] = []

    def make(*names: str) -> dict[str, AgentTool]:
        every = ("pyright", "ruff", "typescript", "gopls", "rust-analyzer", "clangd")
        tables = {name: {"enabled": False} for name in every if name not in names}
        starter = ServerStarter(cache=workspace.parent / "cache")
        servers = LanguageServers(catalog(tables), workspace, starter=starter)
        made.append(servers)
        return {tool.name: tool for tool in default_tools(workspace, lsp=servers)}

    yield {"make": make}
    for servers in made:
        await servers.aclose()


@needs_basedpyright
async def test_a_type_error_is_reported_when_made_and_gone_when_fixed(
    workspace: Path, tools_with: dict[str, object]
) -> None:
    (workspace / "a.py").write_text(
        "import os\n\n\ndef f(x: int) -> str:\n    return str(x)\n\n\ny: str = f(1)\n"
    )
    edit = tools_with["make"]("pyright")["edit"]  # type: ignore[operator]
    broken = await run(edit, {"path": "a.py", "old_text": "y: str", "new_text": "y: int"})
    said = text(broken)
    assert 'a.py:8:10: error: Type "str" is not assignable to declared type "int"' in said
    assert "reportAssignmentType" in said
    assert "os" not in said.split("New problems", 1)[1]  # the unused import was there before
    assert [d["line"] for d in broken.details["diagnostics"]] == [8]
    fixed = await run(edit, {"path": "a.py", "old_text": "y: int", "new_text": "y: str"})
    assert 'Fixed in a.py: error: Type "str" is not assignable' in text(fixed)
    assert fixed.details["diagnostics"] == []


@needs_ruff
async def test_ruff_reports_the_unused_import_an_edit_adds(
    workspace: Path, tools_with: dict[str, object]
) -> None:
    (workspace / "b.py").write_text("x = 1\n")
    edit = tools_with["make"]("ruff")["edit"]  # type: ignore[operator]
    result = await run(edit, {"path": "b.py", "old_text": "x = 1", "new_text": "import sys\nx = 1"})
    assert "b.py:1:8: warning: `sys` imported but unused" in text(result)
    assert "F401" in text(result)


def project(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("from pkg.core import Greeter as Greeter\n")
    (root / "pkg" / "core.py").write_text(
        "class Greeter:\n    def greet(self) -> str:\n        return 'hi'\n"
    )
    (root / "app.py").write_text(
        "from pkg import Greeter as G\n\n\ndef main() -> str:\n    return G().greet()\n"
    )


@needs_basedpyright
async def test_definition_and_references_follow_an_alias_and_a_re_export(
    workspace: Path, tools_with: dict[str, object]
) -> None:
    project(workspace)
    (workspace / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    lsp = tools_with["make"]("pyright")["lsp"]  # type: ignore[operator]
    where = await run(
        lsp, {"operation": "definition", "path": "app.py", "line": 5, "character": 17}
    )
    assert text(where) == "pkg/core.py:2:9: def greet(self) -> str:"
    used = await run(lsp, {"operation": "references", "path": "pkg/core.py", "symbol": "greet"})
    assert text(used).splitlines() == [
        "app.py:5:16: return G().greet()",
        "pkg/core.py:2:9: def greet(self) -> str:",
    ]
    symbols = await run(lsp, {"operation": "symbols", "path": "pkg/core.py"})
    assert text(symbols).splitlines() == [
        "pkg/core.py:1:7: class Greeter",
        "pkg/core.py:2:9: method greet",
    ]
    hover = await run(lsp, {"operation": "hover", "path": "app.py", "line": 5, "character": 17})
    assert text(hover) == "(method) def greet() -> str"
