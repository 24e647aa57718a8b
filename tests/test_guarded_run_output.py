"""The one writer of `run`'s output (docs/DESIGN.md, The guarded places): what `di-code run` puts on
stdout is written by di_code.cli.output's `Writer` alone, which redacts it, shows a terminal's
control characters visibly and turns a closed reader into a stop. Read from the code: a module
below the front ends (system, ai, agent, tools, session, config, setup) or `run` itself that
writes to stdout another way (`print` without a file, `sys.stdout.write`, a Rich console on
stdout, `os.write(1, ...)`) fails here: its text would reach a pipe unredacted, and a `| head`
would raise in it instead of stopping."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "di_code"
BELOW_THE_FRONT_ENDS = ("system", "ai", "agent", "tools", "session", "config", "setup")
RUN = ("cli/run.py",)
OWN_STDOUT = {
    "ai/redaction.py": "routes sys.stdout through RedactingStream (redact_output), writes nothing",
}
"""Modules that name stdout without writing to it, and why."""


def _is_stdout(node: ast.AST) -> bool:
    """`sys.stdout`, `sys.__stdout__` (or `.buffer` of one)."""
    if isinstance(node, ast.Attribute) and node.attr == "buffer":
        node = node.value
    return (
        isinstance(node, ast.Attribute)
        and node.attr in ("stdout", "__stdout__")
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def stdout_writes(source: str) -> list[str]:
    """Each place in `source` that writes to stdout itself (line: what)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func, keywords = node.func, {k.arg: k.value for k in node.keywords}
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if isinstance(func, ast.Name) and name == "print" and "file" not in keywords:
            found.append(f"line {node.lineno}: print()")
        elif name in ("write", "writelines") and _is_stdout(getattr(func, "value", None)):
            found.append(f"line {node.lineno}: sys.stdout.{name}()")
        elif name == "Console" and "file" not in keywords and "stderr" not in keywords:
            found.append(f"line {node.lineno}: Console() on stdout")
        elif name == "write" and getattr(getattr(func, "value", None), "id", None) == "os":
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and first.value == 1:
                found.append(f"line {node.lineno}: os.write(1)")
    return found


def modules() -> list[str]:
    below = [
        path.relative_to(PACKAGE).as_posix()
        for layer in BELOW_THE_FRONT_ENDS
        for path in sorted((PACKAGE / layer).rglob("*.py"))
    ]
    return [*below, *RUN]


def test_only_the_writer_puts_run_output_on_stdout() -> None:
    found = {}
    for relative in modules():
        if relative in OWN_STDOUT:
            continue
        writes = stdout_writes((PACKAGE / relative).read_text(encoding="utf-8"))
        if writes:
            found[relative] = writes
    assert found == {}, "write run's output with di_code.cli.output.Writer"


def test_run_writes_through_the_writer() -> None:
    source = (PACKAGE / "cli" / "run.py").read_text(encoding="utf-8")
    assert "Writer(sys.stdout)" in source


def test_the_checker_catches_a_planted_writer() -> None:
    planted = """
import os, sys
from rich.console import Console
def leak(text):
    print(text)
    sys.stdout.write(text)
    sys.stdout.buffer.write(text.encode())
    os.write(1, text.encode())
    Console().print(text)
def fine(text):
    print(text, file=sys.stderr)
    Console(stderr=True).print(text)
    os.write(2, text.encode())
    sys.stdout.isatty()
"""
    assert stdout_writes(planted) == [
        "line 5: print()",
        "line 6: sys.stdout.write()",
        "line 7: sys.stdout.write()",
        "line 8: os.write(1)",
        "line 9: Console() on stdout",
    ]
