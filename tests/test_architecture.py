"""docs/DESIGN.md, Layers: lower layers never import higher ones; nothing imports cli. Read from the
imports, and from the module names imported by name (`import_off_loop("di_code...")`,
`LazyTool(..., "di_code.tools.builtin.read", ...)`, `import_module`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "di_code"

# which di_code layers each layer may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "system": set(),
    "ai": {"system"},
    "agent": {"system", "ai"},
    "tools": {"system", "ai", "agent"},
    "session": {"system", "ai", "agent"},
    "config": {"system", "ai"},
    "setup": {"system", "ai", "agent", "tools", "session", "config"},
    "ui": {"system", "ai", "agent", "tools", "session", "config", "setup"},
    "acp": {"system", "ai", "agent", "tools", "session", "config", "setup"},
    "batch": {"system", "ai", "agent", "tools", "session", "config", "setup"},
    "cli": {"system", "ai", "agent", "tools", "session", "config", "setup", "ui", "acp", "batch"},
}

MODULE_NAME = re.compile(r"di_code(\.[a-z_0-9]+)+")
"""A string that names one of di-code's modules: imported by that name later."""
STARTED_NOT_IMPORTED = {"di_code.cli.batch_child"}
"""Modules a lower layer names to start them as a program (`python -m`), not to import them:
a batch task's keeper (di_code.batch.worker)."""


def _names_a_module(value: object) -> bool:
    return (
        isinstance(value, str)
        and MODULE_NAME.fullmatch(value) is not None
        and value not in STARTED_NOT_IMPORTED
    )


FACE = "__init__"
"""A package's own `__init__.py` among its parts: `from di_code.tools import READ_ONLY_TOOLS`."""

# which parts of di_code.tools each part may import (besides itself), bottom up: common (the
# tool base, its error, the workspace), process (the launcher and its sandbox), the built-in
# tools, lsp; the package's face (default_tools) makes the tools; the permission policy and the
# extensions read its tool lists
TOOLS_ALLOWED: dict[str, set[str]] = {
    "common": set(),
    "process": {"common"},
    "builtin": {"common", "process"},
    "lsp": {"common", "process", "builtin"},
    FACE: {"common", "process", "builtin", "lsp"},
    "policy": {"common", "process", "builtin", FACE},
    "extensions": {"common", "process", "builtin", FACE},
}


def layer_imports(path: Path, package: str = "di_code") -> set[str]:
    """The parts of `package` (its top-level sub-packages and modules, FACE for the package
    itself) a module imports, absolute or relative, or names to import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    depth = package.count(".") + 1
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{path}: use absolute imports")
            names = [node.module or ""]
        elif isinstance(node, ast.Constant) and _names_a_module(node.value):
            names = [node.value]
        for name in names:
            parts = name.split(".")
            if ".".join(parts[:depth]) == package:
                found.add(parts[depth] if len(parts) > depth else FACE)
    return found - ({FACE} if package == "di_code" else set())


def modules_of(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_lower_layers(layer: str) -> None:
    for module in modules_of(layer):
        forbidden = layer_imports(module) - ALLOWED[layer] - {layer}
        assert not forbidden, f"{module.relative_to(PACKAGE)} imports {sorted(forbidden)}"


@pytest.mark.parametrize("part", sorted(TOOLS_ALLOWED))
def test_tools_parts_import_only_lower_parts(part: str) -> None:
    """Inside tools the direction is one-way too: the built-in tools start programs through
    process and never reach up to the permission policy that judges them."""
    tools = PACKAGE / "tools"
    modules = [tools / "__init__.py"] if part == FACE else sorted((tools / part).rglob("*.py"))
    for module in modules:
        forbidden = layer_imports(module, "di_code.tools") - TOOLS_ALLOWED[part] - {part}
        assert not forbidden, f"{module.relative_to(PACKAGE)} imports {sorted(forbidden)}"


def test_every_tools_part_is_placed() -> None:
    tools = PACKAGE / "tools"
    parts = {p.stem for p in tools.iterdir() if not p.name.startswith("__")} | {FACE}
    assert parts == set(TOOLS_ALLOWED), f"unplaced: {sorted(parts ^ set(TOOLS_ALLOWED))}"


def test_the_tools_checker_catches_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bash.py"
    bad.write_text(
        "from di_code.tools.policy.modes import PLAN\nfrom di_code.tools import JOB_TOOLS\n"
        "import di_code.tools.common.errors\nfrom di_code.agent.tool import AgentTool\n"
    )
    assert layer_imports(bad, "di_code.tools") == {"policy", FACE, "common"}
    assert {"policy", FACE} & TOOLS_ALLOWED["builtin"] == set()


def test_the_checker_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from di_code.agent.loop import run_agent_loop\nimport di_code.cli.app\n"
        "async def later():\n    await import_off_loop('di_code.ui.render')\n"
    )
    assert layer_imports(bad) == {"agent", "cli", "ui"}
    assert "agent" not in ALLOWED["ai"]


def test_each_module_started_as_a_program_is_still_named() -> None:
    sources = "".join(path.read_text(encoding="utf-8") for path in PACKAGE.rglob("*.py"))
    assert all(f'"{name}"' in sources for name in STARTED_NOT_IMPORTED)


def test_every_package_module_belongs_to_a_layer() -> None:
    top = {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert top <= set(ALLOWED), f"unknown layers: {sorted(top - set(ALLOWED))}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_imports(path: Path, known: set[str]) -> set[str]:
    """The di_code modules `path` imports anywhere in it (type-checking and function-level
    imports too: a circle through them is still a circle for the reader)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in known else node.module)
    return {name for name in found if name in known}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module (or a self-import)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_no_module_imports_itself_through_others() -> None:
    paths = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    known = set(paths)
    graph = {name: module_imports(path, known) - {name} for name, path in paths.items()}
    assert import_circles(graph) == []


def test_the_circle_finder_finds_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_circles(graph) == [["a", "b", "c"]]


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert long == {}


def test_every_test_file_name_is_unique() -> None:
    """Test folders have no __init__.py, so pytest imports each file by its name alone: a
    second file of the same name is an error at collection, under xdist a whole run's."""
    names = [path.name for path in (PACKAGE.parent / "tests").rglob("test_*.py")]
    assert sorted({name for name in names if names.count(name) > 1}) == []
