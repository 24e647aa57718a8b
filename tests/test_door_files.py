"""The files door (issue 32): every file a model names or a workspace holds is opened through
di_code.ai.files (non-blocking, regular files only, confined where the caller is, bounded
reads). Read from the code: any other open of a file, anywhere in the package, fails here
unless its module is one of OWN_FILES, which open only di-code's own files (sessions, config,
caches, /proc) and say so."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "di_code"
DOOR = "di_code.ai.files"

OWN_FILES: dict[str, str] = {}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def opens(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, what) for each call in `tree` that opens a file by name: builtins.open, io.open,
    os.open, and pathlib's open, read_text, read_bytes, write_text and write_bytes (told from
    methods of the same name by their arguments: a Path's take none, or only a mode)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func, args = node.func, node.args
        if isinstance(func, ast.Name) and func.id == "open":
            yield node.lineno, "open()"
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if func.attr == "open" and owner in ("os", "io", "builtins"):
                yield node.lineno, f"{owner}.open()"
            elif func.attr == "open" and (not args or _is_mode(args[0])):
                yield node.lineno, ".open()"
            elif func.attr in ("read_text", "read_bytes") and not args:
                yield node.lineno, f".{func.attr}()"
            elif func.attr in ("write_text", "write_bytes") and len(args) == 1:
                yield node.lineno, f".{func.attr}()"


def _is_mode(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def violations(path: Path) -> list[str]:
    name = module_name(path)
    if name == DOOR or name.startswith(DOOR + ".") or name in OWN_FILES:
        return []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [f"{name}:{line} {what}" for line, what in opens(tree)]


def test_every_file_is_opened_through_the_door() -> None:
    found = [v for path in sorted(PACKAGE.rglob("*.py")) for v in violations(path)]
    assert found == []
