"""A tool is found under its wrappers, and a call's arguments are read in its own names, in
one place (agent.tool). Read from the code: a class whose `execute` hands the call on to another
tool names that tool as `wrapped`, or is listed with why it need not."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import di_code
from di_code.agent.tool import call_arguments, own_arguments, unwrapped
from di_code.tools import default_tools
from di_code.tools.builtin.write import WriteTool
from di_code.tools.lsp.diagnosed import Diagnosed
from di_code.tools.lsp.manager import LanguageServers
from di_code.tools.lsp.servers import Catalog


def test_the_write_tool_is_found_under_diagnostics_and_lazy_loading(tmp_path: Path) -> None:
    tools = default_tools(tmp_path)
    [write] = [tool for tool in tools if tool.name == "write"]
    space = unwrapped(write).workspace
    wrapped = Diagnosed(write, space, LanguageServers(Catalog((), ()), tmp_path))
    assert isinstance(unwrapped(wrapped), WriteTool)
    assert unwrapped(wrapped).workspace is space


def test_a_wrapper_that_wraps_itself_does_not_loop() -> None:
    class Loop:
        name = "loop"

        @property
        def wrapped(self) -> Any:
            return self

    tool = Loop()
    assert unwrapped(tool) is tool


def test_arguments_in_claude_codes_names_are_read_in_the_tools_own(tmp_path: Path) -> None:
    tools = default_tools(tmp_path)
    edit = {"file_path": "a.py", "edits": [{"old_string": "x", "new_string": "y"}]}
    assert call_arguments(tools, "edit", edit) == {
        "path": "a.py",
        "edits": [{"old_text": "x", "new_text": "y"}],
    }
    assert call_arguments(tools, "unknown", edit) is edit


def test_a_tool_whose_schema_is_not_an_object_gets_its_arguments_as_they_are() -> None:
    class Odd:
        name = "odd"
        parameters = ("not", "a", "schema")

    arguments = {"file_path": "a"}
    assert own_arguments(Odd(), arguments) is arguments  # type: ignore[arg-type]


PACKAGE = Path(di_code.__file__).parent
NOT_TOOLS = {
    "agent/tool.py:BoundTool": "the loop's way of calling a tool, never offered as one",
}
"""Classes that hand `execute` on to a tool but are no tool themselves, and why."""


def wrappers_without_wrapped(source: str, module: str) -> list[str]:
    """The classes in `source` whose `execute` calls `self.<something>.execute` and that define
    no `wrapped` (`module:Class` each)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        defined = {
            item.name
            for item in node.body
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        hands_on = any(
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "execute"
            and isinstance(call.func.value, ast.Attribute)
            and isinstance(call.func.value.value, ast.Name)
            and call.func.value.value.id == "self"
            for call in ast.walk(node)
        )
        if "execute" in defined and hands_on and "wrapped" not in defined:
            found.append(f"{module}:{node.name}")
    return found


def test_every_wrapper_of_a_tool_names_the_tool_it_wraps() -> None:
    found = [
        place
        for path in sorted(PACKAGE.rglob("*.py"))
        for place in wrappers_without_wrapped(
            path.read_text(encoding="utf-8"), path.relative_to(PACKAGE).as_posix()
        )
    ]
    assert sorted(found) == sorted(NOT_TOOLS), "name the wrapped tool as `wrapped`"


def test_the_reader_finds_a_wrapper_that_hides_its_tool() -> None:
    planted = """
class Hiding:
    async def execute(self, tool_call_id, params, signal=None, on_update=None):
        return await self._inner.execute(tool_call_id, params, signal, on_update)

class Naming(Hiding):
    @property
    def wrapped(self):
        return self._inner

    async def execute(self, tool_call_id, params, signal=None, on_update=None):
        return await self._inner.execute(tool_call_id, params, signal, on_update)
"""
    assert wrappers_without_wrapped(planted, "planted.py") == ["planted.py:Hiding"]
