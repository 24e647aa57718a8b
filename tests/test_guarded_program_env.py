"""The guarded place for the environment of a program di-code starts (bash's commands, hooks, a
`!command`, language servers, the pager, rg, the sandbox's probes):
`di_code.tools.process.program_env`, which leaves out the provider keys di-code holds. This test
reads every module of the package and fails when one starts a process without an explicit
environment (it would inherit the keys), whether through di_code.system.children, the launcher
or subprocess itself, or makes an environment from `os.environ` itself (spread, copied or
passed whole) in the modules that start programs for the user (ROOMS: elsewhere `os.environ` is
read for settings and keys, and handed to no child). OWN_ENVIRONMENT lists the modules that make
their child's environment another way, and why."""

from __future__ import annotations

import ast
from pathlib import Path

import di_code

PACKAGE = Path(di_code.__file__).parent
GUARDED = PACKAGE / "tools" / "process" / "program_env.py"
OWN_ENVIRONMENT = {
    "session/git_run.py": "git's own: this environment without the GIT_* variables (git_env); "
    "git runs none of a repository's programs (session/git_run.py)",
    "batch/worker.py": "a task's `di-code run`, which needs the key; the task's check gets "
    "program_env (_check_environment)",
}
"""Modules whose children get an environment made without program_env, and why each may."""
STARTERS = {
    "create_subprocess_exec",
    "create_subprocess_shell",
    "run",
    "Popen",
    "call",
    "check_call",
    "check_output",
}
"""subprocess's and asyncio's (subprocess's only on `subprocess.`: `run` is a common name)."""
ROOMS = ("tools", "ui", "acp")
"""Where an environment made from `os.environ` itself can only be a child's."""
GUARDED_STARTERS = {"start_child", "run_child", "open_child", "start_program", "open_user_command"}
"""di_code.system.children's and the launcher's: they hand their options on, `env` too."""


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def _starts(func: ast.expr) -> str | None:
    """The name of the process-starting function `func` is, or None."""
    owner = func.value if isinstance(func, ast.Attribute) else None
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in GUARDED_STARTERS or name.startswith("create_subprocess"):
        return str(name)
    if name in STARTERS and isinstance(owner, ast.Name) and owner.id == "subprocess":
        return str(name)
    return None


def breaches(tree: ast.AST, in_rooms: bool = True) -> list[str]:
    """The starts without an environment in `tree`; with `in_rooms`, also every environment
    made from `os.environ` itself."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            owner = func.value if isinstance(func, ast.Attribute) else None
            name = func.attr if isinstance(func, ast.Attribute) else ""
            env = next((k.value for k in node.keywords if k.arg == "env"), None)
            handed_on = any(k.arg is None for k in node.keywords)  # `**options`: the caller's
            starter = _starts(func)
            if starter and not handed_on and (env is None or isinstance(env, ast.Constant)):
                found.append(f"line {node.lineno}: {starter} without an environment")
            if not in_rooms:
                continue
            if any(_is_environ(arg) for arg in node.args):
                found.append(f"line {node.lineno}: os.environ passed whole")
            if name in {"copy", "items"} and owner is not None and _is_environ(owner):
                found.append(f"line {node.lineno}: os.environ.{name}()")
        if (
            in_rooms
            and isinstance(node, ast.Dict)
            and any(
                key is None and _is_environ(value)
                for key, value in zip(node.keys, node.values, strict=True)
            )
        ):
            found.append(f"line {node.lineno}: **os.environ")
    return found


def test_programs_run_for_the_user_get_their_environment_through_the_guarded_place() -> None:
    outside = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if path != GUARDED and relative not in OWN_ENVIRONMENT:
            tree = ast.parse(path.read_text(encoding="utf-8"))
            found = breaches(tree, in_rooms=relative.startswith(ROOMS))
            if found:
                outside[relative] = found
    assert outside == {}, "an environment made outside program_env: " + repr(outside)


def test_each_module_with_its_own_environment_still_makes_one() -> None:
    for relative in OWN_ENVIRONMENT:
        assert breaches(ast.parse((PACKAGE / relative).read_text(encoding="utf-8"))), relative


def test_the_guarded_place_test_sees_a_breach() -> None:
    sample = (
        "import os, subprocess, asyncio\n"
        "subprocess.run(['x'])\n"
        "asyncio.create_subprocess_exec('x', env=None)\n"
        "env = {**os.environ, 'A': '1'}\n"
        "launch(argv, os.environ)\n"
        "subprocess.run(['x'], env=env)\n"
        "children.run_child(['x'])\n"
        "await start_child('x', stdout=PIPE)\n"
        "await start_program(argv, env=None)\n"
        "await start_program(argv, env=env)\n"
        "await start_child(*argv, **options)\n"
    )
    assert len(breaches(ast.parse(sample))) == 7
    assert breaches(ast.parse(GUARDED.read_text(encoding="utf-8"))) == []
