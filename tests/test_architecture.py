"""SPEC §1: lower layers never import higher ones; nothing imports cli. Read from the imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "di_code"

# which di_code layers each layer may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "ai": set(),
    "agent": {"ai"},
    "tools": {"ai", "agent"},
    "session": {"ai", "agent"},
    "config": {"ai"},
    "ui": {"ai", "agent", "tools", "session", "config"},
    "acp": {"ai", "agent", "tools", "session", "config"},
    "cli": {"ai", "agent", "tools", "session", "config", "ui", "acp"},
}


def layer_imports(path: Path) -> set[str]:
    """Top-level di_code layers a module imports, absolute or relative."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{path}: use absolute imports")
            names = [node.module or ""]
        for name in names:
            parts = name.split(".")
            if parts[0] == "di_code" and len(parts) > 1:
                found.add(parts[1])
    return found


def modules_of(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_lower_layers(layer: str) -> None:
    for module in modules_of(layer):
        forbidden = layer_imports(module) - ALLOWED[layer] - {layer}
        assert not forbidden, f"{module.relative_to(PACKAGE)} imports {sorted(forbidden)}"


def test_the_checker_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from di_code.agent.loop import run_agent_loop\nimport di_code.cli.app\n")
    assert layer_imports(bad) == {"agent", "cli"}
    assert "agent" not in ALLOWED["ai"]


def test_every_package_module_belongs_to_a_layer() -> None:
    top = {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert top <= set(ALLOWED), f"unknown layers: {sorted(top - set(ALLOWED))}"
