"""`run` and `chat` command lines parsed without Typer, by the grammar saved from it.

Importing Typer and building its app costs about 30 ms, as much as the rest of `run`'s own
set-up. `save_app.py` saves each quick command's options as Typer declares them
(saved_app.GRAMMARS); this parses the plain forms: `--name value`, `--name=value`, `-n value`,
flags, and at most the command's arguments, anywhere on the line. Anything else (`--`, joined
short options, a value that starts with `-`, a number that is not ≥ 1, an unknown option such as
`--help`) returns None and the line goes to Typer, which parses it or says what is wrong.
tests/cli/test_quick_parse.py checks that whatever is parsed here, Typer parses the same.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

Kind = Literal["flag", "text", "texts", "count"]
"""flag: True when given; text: a string; texts: repeatable, a list; count: an integer ≥ 1."""


class Grammar(NamedTuple):
    arguments: tuple[str, ...]
    """The positional parameters, in order."""
    options: dict[str, tuple[str, Kind]]
    """Every spelling of every option (`--model`, `-m`): its parameter and kind."""
    defaults: dict[str, Any]


def parse(grammar: Grammar, args: Sequence[str]) -> dict[str, Any] | None:
    """Every parameter's value, or None when only Typer can tell."""
    values = dict(grammar.defaults)
    positional: list[str] = []
    rest = iter(args)
    for token in rest:
        if token == "-" or not token.startswith("-"):
            positional.append(token)
            continue
        spelling, inline, value = (
            token.partition("=") if token.startswith("--") else (token, "", "")
        )
        found = grammar.options.get(spelling)
        if found is None:
            return None
        param, kind = found
        if kind == "flag":
            if inline:
                return None
            values[param] = True
            continue
        if not inline:
            value = next(rest, "-x")  # a missing value: let Typer say so
            if value.startswith("-") and value != "-":
                return None
        if kind == "count":
            number = _count(value)
            if number is None:
                return None
            values[param] = number
        elif kind == "texts":
            values[param] = [*(values[param] or ()), value]
        else:
            values[param] = value
    if len(positional) > len(grammar.arguments):
        return None
    values.update(zip(grammar.arguments, positional, strict=False))
    return values


def _count(value: str) -> int | None:
    try:
        number = int(value)
    except ValueError:
        return None
    return number if number >= 1 else None


def quick_command(args: Sequence[str]) -> Callable[[], int] | None:
    """The command `args` asks for, ready to run, when the saved grammar parses them and was
    saved from the app as it is; else None (Typer then parses them)."""
    if not args or "_DI_CODE_COMPLETE" in os.environ:
        return None
    from di_code.cli.app import app_sources_crc
    from di_code.cli.saved_app import GRAMMARS, SOURCES_CRC

    grammar = GRAMMARS.get(args[0])
    values = parse(grammar, args[1:]) if grammar is not None else None
    if values is None or app_sources_crc() != SOURCES_CRC:
        return None
    from dataclasses import fields

    from di_code.cli.bodies import chat_body, run_body
    from di_code.cli.flags import CliOptions, options_from

    options = options_from({f.name: values.pop(f.name) for f in fields(CliOptions)})
    if args[0] == "run":
        return lambda: run_body(options=options, **values)
    return lambda: chat_body(options)
