"""One base for di-code's errors: every exception class the package defines derives from
DiCodeError, so the command line's one place for errors (cli.guarded.guarded) tells the
user's errors (an `exit_code`) from bugs by one attribute, not by a list of classes.

Read from the code: a new exception class on another base fails here."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import di_code
from di_code.system.errors import DiCodeError

PACKAGE = Path(di_code.__file__).parent
OWN_BASES = {"DiCodeError"}
"""Bases that make a class one of di-code's errors; grown below with every class found."""


def exception_classes() -> dict[str, list[str]]:
    """Each exception class the package defines (by its name ending, or by a base that is
    one) → the names of its bases; private ones that never leave their module excluded."""
    classes: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = [ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases]
                classes[f"{path.relative_to(PACKAGE)}:{node.name}"] = bases
    return classes


def test_every_exception_class_derives_from_the_one_base() -> None:
    classes = exception_classes()
    names = {key.rsplit(":", 1)[1]: bases for key, bases in classes.items()}
    own = set(OWN_BASES)
    changed = True
    while changed:  # a class on an own base is own too (MissingKey on ConfigError)
        grown = {name for name, bases in names.items() if own.intersection(bases)}
        changed = not grown <= own
        own |= grown
    builtin_errors = {name for name in dir(builtins) if name.endswith(("Error", "Exception"))}
    stray = [
        key
        for key, bases in classes.items()
        if key.rsplit(":", 1)[1] not in own and builtin_errors.intersection(bases)
    ]
    assert stray == []


def test_the_base_says_which_errors_end_a_command_and_with_which_code() -> None:
    from di_code.batch.tasks import TaskFileError
    from di_code.config.settings import ConfigError
    from di_code.session.format import SessionError

    assert (ConfigError.exit_code, TaskFileError.exit_code) == (2, 2)
    assert SessionError.exit_code is None  # handled where it happens, or a bug
    assert issubclass(SessionError, DiCodeError)
