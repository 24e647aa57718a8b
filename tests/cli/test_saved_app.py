"""The saved `--help` pages and grammars are exactly what the Typer app prints and parses, and
`main()` uses them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from di_code.cli import saved_app
from di_code.cli.app import help_page
from di_code.cli.save_app import MIN_COLUMNS, module_text, typer_grammars, typer_pages
from di_code.cli.saved_app import GRAMMARS, PAGES
from tests.cli.conftest import DI_CODE

REGENERATE = "the help changed: run `python -m di_code.cli.save_app` and commit saved_app.py"


def di_code(*args: str, columns: int) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"COLUMNS": str(columns)}
    return subprocess.run(
        [DI_CODE, *args], capture_output=True, text=True, timeout=60, env=env, check=False
    )


def test_the_pages_are_what_typer_prints() -> None:
    assert typer_pages() == PAGES, REGENERATE


def test_the_grammars_are_the_apps_options() -> None:
    assert typer_grammars() == GRAMMARS, REGENERATE


def test_the_saved_module_is_the_generators_output() -> None:
    assert Path(saved_app.__file__).read_text() == module_text(PAGES, GRAMMARS), REGENERATE


def test_every_command_has_a_page() -> None:
    assert {(), ("run",), ("chat",), ("trust",), ("undo",), ("mcp",), ("mcp", "list")} <= set(PAGES)


@pytest.mark.parametrize("path", sorted(PAGES), ids=lambda path: " ".join(path) or "di-code")
def test_help_prints_the_page(path: tuple[str, ...]) -> None:
    done = di_code(*path, "--help", columns=MIN_COLUMNS + 20)
    assert (done.stdout, done.stderr, done.returncode) == (PAGES[path], "", 0)


def test_a_narrow_terminal_gets_typers_own_wrapping() -> None:
    done = di_code("run", "--help", columns=60)
    assert done.returncode == 0 and done.stdout != PAGES[("run",)]
    assert done.stdout.startswith("Usage: di-code run [OPTIONS] [PROMPT]")
    assert max(len(line) for line in done.stdout.splitlines()) <= 60


def test_other_command_lines_still_go_to_typer() -> None:
    done = di_code("run", "--model", "x", "--help", columns=100)
    assert done.stdout == PAGES[("run",)]  # Typer's eager --help, the same page
    done = di_code("nosuch", "--help", columns=100)
    assert done.returncode == 2 and "No such command 'nosuch'" in done.stderr


def test_pages_saved_from_other_sources_are_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a merge that changed an option, say, Typer answers until they are regenerated."""
    monkeypatch.setenv("COLUMNS", "100")
    assert help_page(["run", "--help"]) == PAGES[("run",)]
    monkeypatch.setattr(saved_app, "SOURCES_CRC", saved_app.SOURCES_CRC + 1)
    assert help_page(["run", "--help"]) is None
