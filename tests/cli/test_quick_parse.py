"""`run` and `chat` lines parsed without Typer mean what Typer would make of them, and every
line the saved grammar cannot parse goes to Typer."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main
from hypothesis import given, settings
from hypothesis import strategies as st

from di_code.cli.commands import app
from di_code.cli.quick_parse import parse
from di_code.cli.saved_app import GRAMMARS
from tests.support.imports import CLI_MAIN, loaded_modules

COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]
SPELLINGS = sorted({s for grammar in GRAMMARS.values() for s in grammar.options})
AWKWARD = ["--help", "--", "-yc", "-mx", "--model=x", "--thinking=1", "--nosuch", "-", ""]
VALUES = ["x", "hi there", "0", "1", "7", "-1", "01", " 2", "1_0", "٣", "openai/gpt", "-x"]
TOKENS = st.sampled_from(SPELLINGS + AWKWARD + VALUES) | st.text(max_size=6)


def typer_values(command: str, args: list[str]) -> dict[str, Any] | None:
    """What Typer's click command parses `args` into, or None when it refuses them."""
    try:
        context = COMMANDS[command].make_context(command, list(args))
    except Exception:  # click's usage errors, and --help's exit
        return None
    return dict(context.params)


def same_shape(values: dict[str, Any]) -> dict[str, Any]:
    """Repeatable options as tuples, and () for none given: click's and ours differ there."""
    multiple = {"image", "add_dir"}
    return {k: tuple(v or ()) if k in multiple else v for k, v in values.items()}


@settings(max_examples=600, deadline=None)
@given(command=st.sampled_from(sorted(GRAMMARS)), args=st.lists(TOKENS, max_size=7))
def test_what_is_parsed_quickly_typer_parses_the_same(command: str, args: list[str]) -> None:
    quick = parse(GRAMMARS[command], args)
    if quick is not None:
        expected = typer_values(command, args)
        assert expected is not None, f"Typer refuses {args}"
        assert same_shape(quick) == same_shape(expected)


@pytest.mark.parametrize(
    "args",
    [
        ["hi"],
        ["-m", "openai/x", "--no-session", "hi"],
        ["hi", "--max-turns", "3", "-y", "--add-dir", "a", "--add-dir=b"],
        ["--image", "a.png", "-", "--output-format=json"],
        ["--model="],
        [],
    ],
    ids=" ".join,
)
def test_plain_lines_are_parsed_quickly(args: list[str]) -> None:
    quick = parse(GRAMMARS["run"], args)
    assert quick is not None
    assert same_shape(quick) == same_shape(typer_values("run", args) or {})


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["hi", "there"],
        ["--max-turns", "0"],
        ["--max-turns", "many"],
        ["--model"],
        ["--model", "--thinking"],
        ["-yc"],
        ["--", "-m"],
        ["--thinking=yes"],
    ],
    ids=" ".join,
)
def test_other_lines_go_to_typer(args: list[str]) -> None:
    assert parse(GRAMMARS["run"], args) is None


def test_a_quick_run_never_imports_typer(tmp_path: Any) -> None:
    """With no model anywhere, `run` fails in set-up: exit 2 and its message, and no Typer."""
    env = {"DI_CODE_HOME": str(tmp_path), "DI_CODE_DISCOVERY": "", "PATH": "/usr/bin:/bin"}
    loaded, _ = loaded_modules(CLI_MAIN, "run", "--no-session", "hi", env=env, cwd=str(tmp_path))
    assert "di_code.cli.bodies" in loaded
    assert not {"typer", "click", "di_code.cli.commands"} & loaded
