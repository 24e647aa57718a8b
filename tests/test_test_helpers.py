"""A helper two test modules share lives in tests/support (or a folder's conftest.py), never in
one of the test modules: a test module imported by another runs its module-level code and skips
twice, and its helpers drift into copies. Read from the imports of every file under tests/."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def foreign_imports(tests: Path) -> list[str]:
    """Each import, anywhere under `tests`, of a module of the tests that is neither in
    tests/support nor a conftest: `path:line module`."""
    found = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                parts = module.split(".")
                if parts[0] != "tests" or len(parts) < 2:
                    continue
                if parts[1] == "support" or parts[-1] == "conftest":
                    continue
                found.append(f"{path.relative_to(tests.parent)}:{node.lineno} {module}")
    return found


def test_test_modules_import_helpers_only_from_support_or_a_conftest() -> None:
    assert foreign_imports(TESTS) == []


def test_the_check_sees_an_import_of_a_test_module(tmp_path: Path) -> None:
    (tmp_path / "tests" / "ui").mkdir(parents=True)
    (tmp_path / "tests" / "support").mkdir()
    (tmp_path / "tests" / "ui" / "test_a.py").write_text(
        "from tests.support.chat import spawn_chat\n"
        "from tests.cli.conftest import cli_env\n"
        "import tests.support.files\n"
        "from tests.ui.test_b import Screen\n"
    )
    (tmp_path / "tests" / "support" / "chat.py").write_text(
        "def f():\n    import tests.ui.test_b\n"
    )
    assert foreign_imports(tmp_path / "tests") == [
        "tests/support/chat.py:2 tests.ui.test_b",
        "tests/ui/test_a.py:4 tests.ui.test_b",
    ]
