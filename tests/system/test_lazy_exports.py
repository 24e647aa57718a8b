"""A lazy package's names are written once, in its `if TYPE_CHECKING:` block: at run time each
is there, loaded from its module when first used, and nothing else is."""

from __future__ import annotations

from pathlib import Path

import pytest

import di_code.session
from tests.support.imports import loaded_modules

INIT = '''"""A package whose names load when used."""
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pkg.cheap import Small, tiny
    from pkg.heavy import Big as Large
else:
    from di_code.system.lazy_exports import lazy_exports

    __getattr__, __dir__ = lazy_exports(__name__, __file__)
'''


@pytest.fixture
def package(tmp_path: Path) -> Path:
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "__init__.py").write_text(INIT)
    (folder / "cheap.py").write_text("class Small: ...\ndef tiny(): return 1\n")
    (folder / "heavy.py").write_text("import decimal\nclass Big: ...\n")
    (folder / "helper.py").write_text("VALUE = 7\n")
    return tmp_path


def run(code: str, cwd: Path) -> tuple[set[str], str]:
    return loaded_modules(f"import sys; sys.path.insert(0, {str(cwd)!r})\n{code}", cwd=str(cwd))


def test_a_name_loads_only_its_own_module(package: Path) -> None:
    loaded, out = run("import pkg; print(pkg.tiny(), type(pkg.Small()).__name__)", package)
    assert out.split() == ["1", "Small"]
    assert "pkg.cheap" in loaded
    assert "pkg.heavy" not in loaded and "decimal" not in loaded


def test_importing_the_package_loads_none_of_its_modules(package: Path) -> None:
    loaded, _ = run("import pkg", package)
    assert {"pkg.cheap", "pkg.heavy"}.isdisjoint(loaded)


def test_an_alias_is_exported_under_its_new_name(package: Path) -> None:
    _, out = run("import pkg, pkg.heavy; print(pkg.Large is pkg.heavy.Big)", package)
    assert out.strip() == "True"


def test_all_dir_and_star_import_give_the_blocks_names(package: Path) -> None:
    code = (
        "import pkg\n"
        "namespace = {}\n"
        "exec('from pkg import *', namespace)\n"
        "print(sorted(set(namespace) - {'__builtins__'}))\n"
        "print(pkg.__all__)\n"
        "print(sorted(set(dir(pkg)) & {'Small', 'tiny', 'Large', 'Big'}))\n"
    )
    _, out = run(code, package)
    assert out.splitlines() == ["['Large', 'Small', 'tiny']"] * 3


def test_an_unknown_name_fails_and_a_submodule_still_imports(package: Path) -> None:
    code = (
        "import pkg\n"
        "try:\n    pkg.Nope\nexcept AttributeError as exc:\n    print(exc)\n"
        "from pkg import helper\n"
        "print(helper.VALUE)\n"
    )
    _, out = run(code, package)
    assert out.splitlines() == ["module 'pkg' has no attribute 'Nope'", "7"]


def test_the_session_package_lists_its_names() -> None:
    assert {"SessionStore", "prompt_with_compaction", "SessionError"} <= set(dir(di_code.session))
    namespace: dict[str, object] = {}
    exec("from di_code.session import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(di_code.session.__all__)
    assert di_code.session.SessionStore.__module__ == "di_code.session.store"
