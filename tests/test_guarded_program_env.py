"""The guarded place for the environment of a program run for the user (bash's commands, hooks, a
`!command`, the pager, rg): `di_code.tools.policy.program_env`, which leaves out the provider
keys di-code holds. This test reads every module of the tools, the ui and the ACP front end
and fails when one starts a process without an explicit environment (it would inherit the
keys) or makes an environment from `os.environ` itself (spread, copied or passed whole)."""

from __future__ import annotations

import ast
from pathlib import Path

import di_code

PACKAGE = Path(di_code.__file__).parent
GUARDED = PACKAGE / "tools" / "policy" / "program_env.py"
ROOMS = ("tools", "ui", "acp")
STARTERS = {
    "create_subprocess_exec",
    "create_subprocess_shell",
    "run",
    "Popen",
    "call",
    "check_call",
    "check_output",
}


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def breaches(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            owner = func.value if isinstance(func, ast.Attribute) else None
            name = func.attr if isinstance(func, ast.Attribute) else ""
            starts = name in STARTERS and (
                name.startswith("create_subprocess")
                or (isinstance(owner, ast.Name) and owner.id == "subprocess")
            )
            env = next((k.value for k in node.keywords if k.arg == "env"), None)
            if starts and (env is None or isinstance(env, ast.Constant)):
                found.append(f"line {node.lineno}: {name} without an environment")
            if any(_is_environ(arg) for arg in node.args):
                found.append(f"line {node.lineno}: os.environ passed whole")
            if name in {"copy", "items"} and owner is not None and _is_environ(owner):
                found.append(f"line {node.lineno}: os.environ.{name}()")
        if isinstance(node, ast.Dict) and any(
            key is None and _is_environ(value)
            for key, value in zip(node.keys, node.values, strict=True)
        ):
            found.append(f"line {node.lineno}: **os.environ")
    return found


def test_programs_run_for_the_user_get_their_environment_through_the_guarded_place() -> None:
    outside = {}
    for room in ROOMS:
        for path in sorted((PACKAGE / room).rglob("*.py")):
            if path != GUARDED:
                found = breaches(ast.parse(path.read_text(encoding="utf-8")))
                if found:
                    outside[str(path.relative_to(PACKAGE))] = found
    assert outside == {}, "an environment made outside program_env: " + repr(outside)


def test_the_guarded_place_test_sees_a_breach() -> None:
    sample = (
        "import os, subprocess, asyncio\n"
        "subprocess.run(['x'])\n"
        "asyncio.create_subprocess_exec('x', env=None)\n"
        "env = {**os.environ, 'A': '1'}\n"
        "launch(argv, os.environ)\n"
        "subprocess.run(['x'], env=env)\n"
    )
    assert len(breaches(ast.parse(sample))) == 4
    assert breaches(ast.parse(GUARDED.read_text(encoding="utf-8"))) == []
