"""Tools from installed Python packages: the entry-point group `di_code.tools`.

A distribution declares, in its `pyproject.toml`:

    [project.entry-points."di_code.tools"]
    weather = "my_package.tools:weather_tool"

and the object named is an AgentTool, a list of them, or a callable (a class, a factory)
returning either. Importing `importlib.metadata` and letting it read every distribution is
work on each start for the rare install with a plugin, so the `*.dist-info/entry_points.txt`
files on `sys.path` are read directly and only those that name the group are parsed; with no
plugin installed the scan reads a few small files and imports nothing.

A plugin that cannot be loaded, or gives something that is not a usable tool, is one warning
line; the run goes on without it. Plugin tools are not read-only: they ask in ask mode.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Collection, Iterator, Sequence
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
_SECTION = re.compile(r"^\[\s*(.+?)\s*\]\s*$")


class EntryPoint(Struct, frozen=True):
    name: str
    value: str
    """`module:attribute` (the attribute may be dotted, or absent)."""
    distribution: str

    def load(self) -> Any:
        module_name, _, attribute = self.value.partition(":")
        target: Any = importlib.import_module(module_name.strip())
        for part in attribute.split("[")[0].strip().split("."):
            if part:
                target = getattr(target, part)
        return target


class PluginTools(Struct, frozen=True):
    tools: tuple[AgentTool, ...]
    warnings: tuple[str, ...] = ()


def load_plugin_tools(
    taken: Collection[str] = (), paths: Sequence[str] | None = None
) -> PluginTools:
    """The tools of every `di_code.tools` entry point; a name in `taken` (the built-in tools)
    or RESERVED, or given twice, is refused with a warning, the first one keeping it."""
    names = set(taken) | RESERVED
    tools: list[AgentTool] = []
    warnings: list[str] = []
    for entry in entry_points(GROUP, sys.path if paths is None else paths):
        where = f"plugin {entry.name} ({entry.distribution})"
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


def entry_points(group: str, paths: Sequence[str]) -> Iterator[EntryPoint]:
    """The group's entry points of the distributions on `paths`, the first of a name winning
    (as for imports)."""
    seen: set[str] = set()
    for folder in paths:
        for dist_folder, text in _entry_point_files(folder or "."):
            project = _project_name(dist_folder)
            if project in seen:
                continue
            seen.add(project)
            if f"[{group}]" in text:
                for name, value in _section(text, group):
                    yield EntryPoint(name, value, project)


def _entry_point_files(folder: str) -> Iterator[tuple[str, str]]:
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return
    for name in entries:
        if name.endswith((".dist-info", ".egg-info")):
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), encoding="utf-8") as f:
                    yield name, f.read()
            except (OSError, UnicodeDecodeError):
                yield name, ""


def _project_name(dist_folder: str) -> str:
    """`My_Pkg-1.0.dist-info` → `my-pkg` (the normalized name, to tell duplicates)."""
    return re.sub(r"[-_.]+", "-", dist_folder.rsplit(".", 1)[0].split("-")[0]).lower()


def _section(text: str, group: str) -> Iterator[tuple[str, str]]:
    """`name = value` lines of one `[group]` section of an entry_points.txt."""
    inside = False
    for line in text.splitlines():
        line = line.strip()
        header = _SECTION.match(line)
        if header:
            inside = header.group(1) == group
        elif inside and "=" in line and not line.startswith(("#", ";")):
            name, _, value = line.partition("=")
            yield name.strip(), value.strip()


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
