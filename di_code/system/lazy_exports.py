"""Lazy exports for a package whose public names are written once: as the `from … import …`
statements of its `if TYPE_CHECKING:` block.

Type checkers read that block and see every name with its type. At run time the block is
skipped, so importing the package loads none of the modules it names (`di_code.ai.types`
alone must not bring asyncio and the validator with it). The first time a missing attribute is
asked for, the block is read from the package's own source (PEP 562 `__getattr__`); a name's
module is imported when that name is first used. A package's `__init__.py`:

    if TYPE_CHECKING:
        from di_code.session.store import SessionStore, SessionSummary
    else:
        __getattr__, __dir__ = lazy_exports(__name__, __file__)

`__all__` is the block's names, so `from package import *` gives exactly them. pyproject.toml
names each such package for ruff (F401: the block's imports are not unused) and for mypy
(implicit_reexport: they are the package's exports).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any


def lazy_exports(
    package: str, init_file: str
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's module-level `__getattr__` and `__dir__`."""
    homes: dict[str, tuple[str, str]] = {}

    def names() -> dict[str, tuple[str, str]]:
        if not homes:
            homes.update(exported_names(Path(init_file)))
        return homes

    def get(name: str) -> Any:
        if name == "__all__":
            value: Any = sorted(names())
        elif name in names():
            module, original = names()[name]
            value = getattr(import_module(module), original)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)  # from now on a plain attribute
        return value

    def listing() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names()})

    return get, listing


def exported_names(init_file: Path) -> dict[str, tuple[str, str]]:
    """Each name that the file's top-level `if TYPE_CHECKING:` block imports, with the module it
    is imported from and its name there."""
    import ast  # loaded already wherever a package name is used at start-up

    homes: dict[str, tuple[str, str]] = {}
    for node in ast.parse(init_file.read_text(encoding="utf-8")).body:
        test = node.test if isinstance(node, ast.If) else None
        if isinstance(node, ast.If) and isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    for alias in statement.names:
                        homes[alias.asname or alias.name] = (statement.module, alias.name)
    return homes
