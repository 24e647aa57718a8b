"""ACP's way in, read from the code: an editor's session is registered in one place, under the one
id the editor knows (taken before the first wait), and a session's folder is one value: a stored
session reaches an agent only through `SessionStore.open`, which checks its folder.

The attacks themselves run over real pipes in tests/acp/test_acp_hostile_requests.py."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "di_code"
ADDING = {"setdefault", "update", "__setitem__", "fromkeys"}


def functions(paths: list[Path]) -> Iterator[tuple[Path, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield path, node


def own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function, not of the functions nested in it."""
    for child in ast.iter_child_nodes(function):
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield child
            yield from own_nodes(child)


def is_attr(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == name


def adds_to(node: ast.AST, name: str) -> bool:
    """`x.name[k] = v` (or `+=`), or `x.name.setdefault/update(...)`."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
        return is_attr(node.value, name)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ADDING and is_attr(node.func.value, name)
    return False


def calls(node: ast.AST, name: str) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return isinstance(func, ast.Name | ast.Attribute) and (
        getattr(func, "id", None) == name or getattr(func, "attr", None) == name
    )


def places(paths: list[Path], found: Callable[[ast.AST], bool]) -> list[str]:
    return sorted(
        {
            f"{named(path)}:{function.name}"
            for path, function in functions(paths)
            if any(found(node) for node in own_nodes(function))
        }
    )


def named(path: Path) -> str:
    return str(path.relative_to(PACKAGE)) if path.is_relative_to(PACKAGE) else path.name


ACP = sorted((PACKAGE / "acp").rglob("*.py"))
EVERYTHING = sorted(PACKAGE.rglob("*.py"))


def test_a_session_is_registered_in_one_place() -> None:
    registering = places(ACP, lambda node: adds_to(node, "_sessions"))
    assert registering == ["acp/sessions.py:_register"], registering
    building = places(ACP, lambda node: calls(node, "LiveSession"))
    assert len(building) == 1, building
    [builder] = [f for p, f in functions(ACP) if f"{named(p)}:{f.name}" == building[0]]
    assert any(calls(node, "_register") for node in own_nodes(builder)), building


def test_a_reopened_id_is_taken_before_the_first_wait() -> None:
    """Two loads of one session at once: the second must see the first's id taken."""
    taking = [f for _, f in functions(ACP) if any(is_changing_add(n) for n in own_nodes(f))]
    assert taking, "no function takes a stored session's id while it opens"
    for function in taking:
        first_add = min(n.lineno for n in own_nodes(function) if is_changing_add(n))
        awaits = [n.lineno for n in own_nodes(function) if isinstance(n, ast.Await)]
        assert all(first_add < line for line in awaits), function.name


def is_changing_add(node: ast.AST) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (
        isinstance(func, ast.Attribute) and func.attr == "add" and is_attr(func.value, "_changing")
    )


def test_the_folder_an_editor_names_is_read_in_one_place() -> None:
    """The editor's `cwd` becomes a session's folder only through `_folder` (server.py hands
    it on to the method of the same name; `list_page` only filters the list by it)."""
    session_modules = [PACKAGE / "acp" / "server.py", PACKAGE / "acp" / "sessions.py"]
    for path, function in functions(session_modules):
        if function.name == "_folder":
            continue
        where = f"{named(path)}:{function.name}"
        uses = [n for n in own_nodes(function) if isinstance(n, ast.Name) and n.id == "cwd"]
        for call in (n for n in own_nodes(function) if isinstance(n, ast.Call)):
            passed = [a for a in call.args if a in uses]
            handed_on = getattr(call.func, "attr", None) == function.name
            checked = calls(call, "_folder") or calls(call, "list_page")
            assert not passed or checked or handed_on, where
            uses = [use for use in uses if use not in passed]
        assert not uses, f"{where} reads cwd itself"
    requests = places(ACP, lambda node: calls(node, "SessionRequest"))
    assert len(requests) == 1, requests


def test_a_stored_session_is_loaded_only_through_the_folder_check() -> None:
    """`Session.load` outside `SessionStore.open` only reads a transcript's messages."""
    for path, function in functions(EVERYTHING):
        for node in own_nodes(function):
            if not (isinstance(node, ast.Call) and is_load(node.func)):
                continue
            where = f"{named(path)}:{function.name}"
            if where == "session/store.py:open":
                assert any(calls(n, "check_folder") for n in own_nodes(function))
                continue
            readers = [
                parent
                for parent in own_nodes(function)
                if is_attr(parent, "context") and getattr(parent, "value", None) is node
            ]
            assert readers, f"{where} loads a session without SessionStore.open"


def is_load(func: ast.AST) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "load"
        and isinstance(func.value, ast.Name)
        and func.value.id == "Session"
    )


def test_the_checks_see_a_second_way_in(tmp_path: Path) -> None:
    """The readers above catch what they look for."""
    rogue = tmp_path / "rogue.py"
    rogue.write_text(
        "def sneak(self, live):\n    self._sessions[live.id] = live\n"
        "def load(path):\n    return Session.load(path)\n"
        "async def take(self, x):\n    await y()\n    self._changing.add(x)\n"
    )
    assert places([rogue], lambda node: adds_to(node, "_sessions"))
    [(_, take)] = [(p, f) for p, f in functions([rogue]) if f.name == "take"]
    assert any(is_changing_add(n) for n in own_nodes(take))
    assert any(
        isinstance(n, ast.Call) and is_load(n.func)
        for _, f in functions([rogue])
        for n in own_nodes(f)
    )
