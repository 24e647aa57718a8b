"""One runner for git: `di_code/session/git_run.py` is the only module that starts git.

Read from the code: every call that starts a program (subprocess, asyncio's subprocess
functions, os.exec*/spawn*/posix_spawn/system/popen, pty and pexpect) is found, its arguments
are followed through the names assigned in the same function or module, and a call whose
program can be git (`"git"`, `"/usr/bin/git"`, `"git status"` for a shell, `shutil.which("git")`)
fails the test. An argument list that starts with "git" anywhere else (handed to a helper that
starts it) fails too. The checker is shown to catch planted violations of each kind.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "di_code"
GUARDED = PACKAGE / "session" / "git_run.py"
STARTERS = {
    "subprocess": {"run", "Popen", "call", "check_call", "check_output", "getoutput"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "pty": {"spawn"},
    "pexpect": {"spawn", "run", "popen_spawn"},
}
OS_STARTERS = ("exec", "spawn", "posix_spawn", "system", "popen")
LOOP_STARTERS = {"subprocess_exec", "subprocess_shell"}
"""`loop.subprocess_exec(...)`: a method of whatever the loop is called."""


def is_git(text: str) -> bool:
    """A program name or shell line whose program is git."""
    words = text.split()
    return bool(words) and words[0].rsplit("/", 1)[-1] in ("git", "git.exe")


class Module:
    """One module's tree, with what each name was assigned in each function (and at the top)."""

    def __init__(self, source: str) -> None:
        self.tree = ast.parse(source)
        self.imports: dict[str, str] = {}
        self.assigned: dict[ast.AST, dict[str, list[ast.expr]]] = {}
        self.parents: dict[ast.AST, ast.AST] = {}
        self.package: dict[str, Module] = {}
        """Every module by its dotted name: a name imported from one is followed there."""
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name) and node.value is not None:
                            scope = self.assigned.setdefault(self.scope(node), {})
                            scope.setdefault(name.id, []).append(node.value)

    def scope(self, node: ast.AST) -> ast.AST:
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                return node
        return self.tree

    def dotted(self, node: ast.expr) -> str:
        """`subprocess.run`, `os.execvp`, ... with import aliases undone ("" if not a name)."""
        if isinstance(node, ast.Name):
            return self.imports.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            owner = self.dotted(node.value)
            return f"{owner}.{node.attr}" if owner else f"?.{node.attr}"
        return ""

    def starts_a_program(self, call: ast.Call) -> bool:
        name = self.dotted(call.func)
        owner, _, function = name.rpartition(".")
        if owner == "os":
            return function.startswith(OS_STARTERS)
        return function in STARTERS.get(owner, set()) or function in LOOP_STARTERS

    def can_be_git(
        self, node: ast.AST | None, at: ast.AST, seen: frozenset[str] = frozenset()
    ) -> bool:
        """Whether the value of `node` (an expression at `at`) can name git."""
        match node:
            case ast.Constant(value=str() as text):
                return is_git(text)
            case ast.JoinedStr(values=[ast.Constant(value=str() as text), *_]):
                return is_git(text)
            case ast.List(elts=items) | ast.Tuple(elts=items) | ast.Set(elts=items):
                return any(self.can_be_git(item, at, seen) for item in items)
            case ast.Starred(value=value):
                return self.can_be_git(value, at, seen)
            case ast.BinOp(left=left, right=right):
                return self.can_be_git(left, at, seen) or self.can_be_git(right, at, seen)
            case ast.IfExp(body=body, orelse=orelse):
                return self.can_be_git(body, at, seen) or self.can_be_git(orelse, at, seen)
            case ast.Subscript(value=value):
                return self.can_be_git(value, at, seen)
            case ast.Call(args=args, keywords=keywords):
                values = [*args, *(keyword.value for keyword in keywords)]
                return any(self.can_be_git(value, at, seen) for value in values)
            case ast.Name(id=name) if name not in seen:
                values = list(self.values(name, at))
                if not values:  # imported: its value is in the module it came from
                    return self.imported_can_be_git(self.imports.get(name, ""), seen | {name})
                return any(self.can_be_git(value, value, seen | {name}) for value in values)
            case ast.Attribute():
                return self.imported_can_be_git(self.dotted(node), seen)
        return False

    def imported_can_be_git(self, dotted: str, seen: frozenset[str]) -> bool:
        """Whether `package.module.NAME` can name git (what it was assigned at the top)."""
        owner, _, name = dotted.rpartition(".")
        module = self.package.get(owner)
        if module is None or dotted in seen:
            return False
        values = module.assigned.get(module.tree, {}).get(name, [])
        return any(module.can_be_git(value, value, seen | {dotted}) for value in values)

    def is_git_argv(self, node: ast.List | ast.Tuple) -> bool:
        """A list that starts with git, but not a type (`Literal["git", ...]`) nor the choices
        of a comparison (`in ("git", ...)`)."""
        first = node.elts[0] if node.elts else None
        if not isinstance(first, ast.Constant) or not isinstance(first.value, str):
            return False
        in_type_or_test = isinstance(self.parents.get(node), ast.Subscript | ast.Compare)
        return is_git(first.value) and not in_type_or_test

    def values(self, name: str, at: ast.AST) -> Iterator[ast.expr]:
        """What `name` was assigned in the function around `at` and every function around that
        one, up to the module."""
        scope = self.scope(at)
        while True:
            yield from self.assigned.get(scope, {}).get(name, [])
            if scope is self.tree:
                return
            scope = self.scope(scope)


def load(sources: dict[str, str]) -> dict[str, Module]:
    """Modules by dotted name, each able to follow names into the others."""
    modules = {name: Module(source) for name, source in sources.items()}
    for module in modules.values():
        module.package = modules
    return modules


def violations(module: Module) -> list[str]:
    """Each place in `module` that starts git, or builds an argument list for it."""
    found = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Call) and module.starts_a_program(node):
            arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
            if any(module.can_be_git(argument, node) for argument in arguments):
                found.append(f"line {node.lineno}: {module.dotted(node.func)} can start git")
        elif isinstance(node, ast.Call) and module.dotted(node.func) == "shutil.which":
            if any(module.can_be_git(argument, node) for argument in node.args):
                found.append(f"line {node.lineno}: shutil.which finds git")
        elif isinstance(node, ast.List | ast.Tuple) and module.is_git_argv(node):
            found.append(f"line {node.lineno}: an argument list for git")
    return found


def planted(source: str, **others: str) -> list[str]:
    return violations(load({"planted": source, **others})["planted"])


def test_only_the_guarded_place_starts_git() -> None:
    sources = {
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(
            ".__init__"
        ): path.read_text(encoding="utf-8")
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    modules = load(sources)
    runner = modules.pop("di_code.session.git_run")
    found = [f"{name} {where}" for name, module in modules.items() for where in violations(module)]
    assert found == [], "git started outside di_code/session/git_run.py (run_git): " + "; ".join(
        found
    )
    assert violations(runner)  # the checker sees the runner: were it blind, this proves nothing


PLANTED = {
    "run": "import subprocess\nsubprocess.run(['git', 'status'])\n",
    "alias": "import subprocess as s\ndef f(a):\n    c = ['/usr/bin/git', *a]\n    s.Popen(c)\n",
    "from-import": "from subprocess import check_output as out\nout(('git',) + ('log',))\n",
    "shell": "import subprocess\nsubprocess.run('git fetch origin', shell=True)\n",
    "f-string": "import os\nos.system(f'git -C {x} pull')\n",
    "asyncio": "import asyncio as a\nasync def f():\n    await a.create_subprocess_exec('git')\n",
    "exec": "import os\nos.execvp('git', ['git', 'status'])\n",
    "spawn": "import os\nos.posix_spawnp('git', ['git'], {})\n",
    "loop": "async def f(loop):\n    program = 'git'\n    await loop.subprocess_exec(P, program)\n",
    "which": "import shutil, subprocess\nsubprocess.run([shutil.which('git'), 'status'])\n",
    "helper": "def run(argv):\n    pass\nrun(['git', 'worktree', 'add'])\n",
    "outer-name": "import subprocess\nGIT = 'git'\ndef f():\n    subprocess.call([GIT])\n",
}


@pytest.mark.parametrize("source", PLANTED.values(), ids=PLANTED.keys())
def test_the_checker_catches_a_planted_violation(source: str) -> None:
    assert planted(source), source


@pytest.mark.parametrize(
    "source",
    [
        "import subprocess\nfrom di_code.names import GIT\nsubprocess.run([GIT, 'log'])\n",
        "import subprocess\nimport di_code.names as n\nsubprocess.run((n.GIT, 'log'))\n",
        "import os\nfrom di_code import names\nos.execv(names.GIT_PATH, [])\n",
    ],
)
def test_the_checker_follows_a_name_into_the_module_it_came_from(source: str) -> None:
    names = "GIT = 'git'\nGIT_PATH = '/usr/bin/' + GIT\n"
    assert planted(source, **{"di_code.names": names}), source


def test_the_checker_lets_other_programs_and_words_pass() -> None:
    source = (
        "import subprocess, asyncio\n"
        "subprocess.run(['rg', '--glob', '!.git', 'pattern'])\n"
        "KIND = {'git': 1}\n"
        "def f(command):\n"
        "    return asyncio.create_subprocess_exec('bash', '-c', command)\n"
        "subprocess.run(['bwrap', '--ro-bind', '/x/.git', '/x/.git'])\n"
    )
    assert planted(source) == []
