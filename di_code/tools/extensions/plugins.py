"""Tools from installed Python packages: the entry-point group `di_code.tools`.

A distribution declares, in its `pyproject.toml`:

    [project.entry-points."di_code.tools"]
    weather = "my_package.tools:weather_tool"

and the object named is an AgentTool, a list of them, or a callable (a class, a factory)
returning either. The entry points are importlib.metadata's: it finds them on sys.path, the
first distribution of a name winning, as an import would.

A plugin that cannot be loaded, or gives something that is not a usable tool, is one warning
line; the run goes on without it. Plugin tools are not read-only: they ask in ask mode.
"""

from __future__ import annotations

from collections.abc import Collection
from importlib import metadata
from typing import Any

from msgspec import Struct

from di_code.agent.tool import AgentTool, bind_tool
from di_code.tools import READ_ONLY_TOOLS
from di_code.tools.builtin.cards import PLAN
from di_code.tools.extensions.tool_names import PROVIDER_NAME

GROUP = "di_code.tools"
RESERVED = READ_ONLY_TOOLS | {PLAN.name}
"""Built-in names no plugin takes, even where the built-in is not among the session's tools
when plugins load (task and the plan tool come later, lsp only with a language server): the
permission gate trusts these names (they run unasked, in plan and read-only modes too), and a
plugin is not read-only."""


class PluginTools(Struct, frozen=True):
    tools: tuple[AgentTool, ...]
    warnings: tuple[str, ...] = ()


def load_plugin_tools(taken: Collection[str] = ()) -> PluginTools:
    """The tools of every `di_code.tools` entry point; a name in `taken` (the built-in tools)
    or RESERVED, or given twice, is refused with a warning, the first one keeping it."""
    names = set(taken) | RESERVED
    tools: list[AgentTool] = []
    warnings: list[str] = []
    for entry in metadata.entry_points(group=GROUP):
        where = f"plugin {entry.name} ({_distribution(entry)})"
        try:
            for tool in _tools_of(entry.load()):
                problem = _problem(tool, names)
                if problem:
                    warnings.append(f"{where}: skipped: {problem}")
                    continue
                names.add(tool.name)
                tools.append(tool)
        except Exception as exc:  # a plugin's own bug (at import, in a property): never fatal
            warnings.append(f"{where}: could not load: {type(exc).__name__}: {exc}")
    return PluginTools(tuple(tools), tuple(warnings))


def _distribution(entry: metadata.EntryPoint) -> str:
    """The name of the distribution that declares `entry`, as its metadata spells it."""
    name = entry.dist.name if entry.dist is not None else None
    return name or entry.value


def _tools_of(target: Any) -> list[Any]:
    """An AgentTool, a list of them, or a callable (class, factory) that returns either."""
    if isinstance(target, type) or (
        callable(target) and not isinstance(target, AgentTool | list | tuple)
    ):
        target = target()
    return list(target) if isinstance(target, list | tuple) else [target]


def _problem(tool: Any, taken: Collection[str]) -> str | None:
    """Why `tool` cannot be offered to the model, or None."""
    if not isinstance(tool, AgentTool):
        return f"{type(tool).__name__} is not an AgentTool (name, description, parameters, execute)"
    if not isinstance(tool.name, str) or not PROVIDER_NAME.fullmatch(tool.name):
        return f"tool name {tool.name!r} is not 1-64 letters, digits, _ or - (a letter or _ first)"
    if tool.name in taken:
        return f"a tool named {tool.name} exists already"
    if not isinstance(tool.parameters, dict):
        return f"tool {tool.name}: parameters is not a JSON Schema object"
    try:
        bind_tool(tool)
    except TypeError as exc:
        return str(exc)
    return None
