"""Tools from installed distributions (entry-point group `di_code.tools`): loaded from real
`*.dist-info` folders on a path, a broken one is a warning, and they ask in ask mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from di_code.agent.tool import FunctionTool
from di_code.ai.types import TextContent
from di_code.system.abort import AbortController
from di_code.tools.extensions.plugins import load_plugin_tools
from di_code.tools.policy.permissions import PermissionGate
from tests.support.gated import gate_tools

MODULE = """
from di_code.ai.types import TextContent

class Shout:
    name = "shout"
    description = "Upper-case a text."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}}

    async def execute(self, tool_call_id, params, signal=None):
        return [TextContent(params["text"].upper() + "!")]

def pair():
    first, second = Shout(), Shout()
    second.name = "shout2"
    return [first, second]

class NoExecute:
    name = "half"
    description = "has no execute"
    parameters = {"type": "object"}

not_a_tool = 42

class Raising(Shout):
    @property
    def name(self):
        raise RuntimeError("no name today")
"""


def install(site: Path, dist: str, module: str, entries: str, code: str = MODULE) -> None:
    """A distribution as pip leaves it: a module and a dist-info with its METADATA and
    entry_points.txt."""
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entries)
    (site / f"{module}.py").write_text(code)


def test_tools_warnings_and_duplicates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    install(
        site,
        "acme_tools",
        "acme_plugin_a",
        "[console_scripts]\nacme = acme_plugin_a:main\n\n"
        "[di_code.tools]\n"
        "shout = acme_plugin_a:Shout\n"
        "pair = acme_plugin_a:pair\n"
        "gone = acme_plugin_a:missing\n"
        "broken = no_such_module_for_di_code:tool\n"
        "half = acme_plugin_a:NoExecute\n"
        "number = acme_plugin_a:not_a_tool\n"
        "raising = acme_plugin_a:Raising\n",
    )
    as_read = MODULE.replace('name = "shout"', 'name = "read"')
    install(site, "other", "other_plugin_a", "[di_code.tools]\nr = other_plugin_a:Shout\n", as_read)
    later = tmp_path / "later"
    install(later, "Acme.Tools", "acme_plugin_b", "[di_code.tools]\nx = acme_plugin_b:Shout\n")
    monkeypatch.syspath_prepend(str(later))
    monkeypatch.syspath_prepend(str(site))  # before `later`: its Acme.Tools is acme_tools's twin
    found = load_plugin_tools(taken=["read"])
    assert [tool.name for tool in found.tools] == ["shout", "shout2"]
    assert found.warnings == (
        "plugin pair (acme_tools): skipped: a tool named shout exists already",
        "plugin gone (acme_tools): could not load: AttributeError: "
        "module 'acme_plugin_a' has no attribute 'missing'",
        "plugin broken (acme_tools): could not load: ModuleNotFoundError: "
        "No module named 'no_such_module_for_di_code'",
        "plugin half (acme_tools): skipped: NoExecute is not an AgentTool "
        "(name, description, parameters, execute)",
        "plugin number (acme_tools): skipped: int is not an AgentTool "
        "(name, description, parameters, execute)",
        "plugin raising (acme_tools): could not load: RuntimeError: no name today",
        "plugin r (other): skipped: a tool named read exists already",
    )


def test_only_the_group_is_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, "a", "m_a", "[other]\nx = m_a:Shout\n[di_code.tools]\n# c\nt = m_a:Shout\n")
    install(tmp_path, "b", "m_b", "[console_scripts]\nb = m_b:main\n")
    (tmp_path / "c-1.0.dist-info").mkdir()  # no entry_points.txt at all
    monkeypatch.syspath_prepend(str(tmp_path))
    found = load_plugin_tools()
    assert [tool.name for tool in found.tools] == ["shout"] and found.warnings == ()


async def test_a_plugin_tool_asks_in_ask_mode() -> None:
    runs: list[str] = []

    async def run(_id: str, params: dict[str, Any], _signal: object) -> list[TextContent]:
        runs.append("ran")
        return [TextContent("done")]

    [tool] = gate_tools([FunctionTool("deploy", "a plugin tool", {}, run)], PermissionGate("ask"))
    result = await tool.execute("c1", {}, AbortController().signal)
    assert runs == []
    assert "needs the user's approval" in result.content[0].text  # type: ignore[union-attr]
