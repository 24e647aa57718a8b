"""A tool is found under its wrappers, and a call's arguments are read in its own names, in
one place (agent.tool: issue 42.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
