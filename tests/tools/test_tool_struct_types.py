"""The tools' data types on `run`'s path are msgspec Structs (issue 36): a Struct class is
built in C, where a frozen slots dataclass generates and compiles its methods at import. What
their users rely on stays: positional and keyword construction, equality, hashing of the
frozen ones, immutability, a fresh default per instance, and replace."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from pathlib import Path
from types import ModuleType

import msgspec
import pytest

from di_code.tools.builtin.support import bash_policy, spill, subagents
from di_code.tools.builtin.support.bash_policy import BashPolicy
from di_code.tools.builtin.support.spill import SpillFolder
from di_code.tools.builtin.support.subagents import Subagents
from di_code.tools.common import workspace
from di_code.tools.common.workspace import Workspace
from di_code.tools.extensions import mcp_config, plugins
from di_code.tools.extensions.mcp_config import McpServerConfig, parse_servers
from di_code.tools.extensions.plugins import PluginTools
from di_code.tools.lsp import manager, report, servers
from di_code.tools.lsp.manager import LanguageServers, Slot
from di_code.tools.lsp.report import Problem
from di_code.tools.lsp.servers import Catalog, ServerSpec, catalog
from di_code.tools.policy import shell_parse, wrapper_grammars
from di_code.tools.policy.shell_parse import ParsedLine, SimpleCommand, parse_line
from di_code.tools.policy.wrapper_grammars import SU, WRAPPERS, Wrapper
from di_code.tools.process import sandbox, sandbox_mounts
from di_code.tools.process.sandbox import Sandbox, SandboxChoice
from di_code.tools.process.sandbox_mounts import SandboxPaths

MODULES = [manager, report, servers, sandbox_mounts, sandbox, spill, bash_policy, wrapper_grammars]
MODULES += [shell_parse, subagents, workspace, mcp_config, plugins]


def _data_types(module: ModuleType) -> list[type]:
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and value.__module__ == module.__name__
        and not issubclass(value, Exception)
        and not getattr(value, "_is_protocol", False)
    ]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_data_type_is_a_struct(module: ModuleType) -> None:
    found = _data_types(module)
    assert found
    assert [cls.__name__ for cls in found if dataclasses.is_dataclass(cls)] == []
    assert all(issubclass(cls, msgspec.Struct) for cls in found)


def test_language_server_types_keep_their_semantics() -> None:
    spec = ServerSpec("x", ("x-ls",), extensions=(".x",))
    assert spec == ServerSpec(name="x", command=("x-ls",), extensions=(".x",))
    assert spec.initialization_options == {} and spec.startup_timeout == 10.0
    assert spec.initialization_options is not ServerSpec("y", ()).initialization_options
    with pytest.raises(AttributeError):
        spec.name = "y"  # type: ignore[misc]
    found = catalog({"x": {"command": ["x-ls"], "extensions": [".x"], "startup_timeout": 3}})
    assert found.for_path(Path("a.x")) == [msgspec.structs.replace(spec, startup_timeout=3.0)]
    assert Catalog((), ()) == Catalog((), (), ()) and hash(Catalog((), ())) == hash(Catalog((), ()))
    problem = Problem(3, 1, "error", "bad")
    assert hash(problem) == hash(Problem(line=3, column=1, severity="error", message="bad"))
    assert pickle.loads(pickle.dumps(problem)) == problem
    one, two = (
        LanguageServers(Catalog((), ()), Path("/")),
        LanguageServers(Catalog((), ()), Path("/")),
    )
    one.notes.append("said")
    assert two.notes == [] and two.slots == {} and one != two
    slot = Slot(spec, Path("/"))
    slot.state = "running"
    assert (slot.state, slot.crashes, slot.connection) == ("running", 0, None)


def test_bash_policy_types_keep_their_semantics() -> None:
    paths = SandboxPaths(Path("/home"), hide=(Path("/secret"),))
    assert paths == SandboxPaths(di_code_home=Path("/home"), hide=(Path("/secret"),), reveal=())
    choice = SandboxChoice("read-only", True, paths)
    assert choice.sandbox("ask") == Sandbox("read-only", network=True, paths=paths)
    assert hash(choice) == hash(SandboxChoice(requested="read-only", network=True, paths=paths))
    assert SandboxChoice().paths == SandboxPaths() and SandboxChoice("off").sandbox("auto") is None
    policy = BashPolicy()
    assert policy.sandboxing == SandboxChoice("off") and policy.spill == SpillFolder()
    assert policy.mode() == "ask" and policy.state() == "unsandboxed"
    assert BashPolicy(mode=lambda: "auto").mode() == "auto"
    folder = SpillFolder.for_session(Path("/s/a.jsonl"))
    assert (folder.path, folder.session_file) == (Path("/s/a.bash-output"), Path("/s/a.jsonl"))
    assert pickle.loads(pickle.dumps(folder)) == folder
    with pytest.raises(AttributeError):
        folder.path = None  # type: ignore[misc]


def test_shell_types_keep_their_semantics() -> None:
    line = parse_line("sudo rm -rf x")
    inner = SimpleCommand(("rm", "-rf", "x"))
    words = ("sudo", "rm", "-rf", "x")
    assert line == ParsedLine((SimpleCommand(words, (inner,)),), (words, ("rm", "-rf", "x")))
    assert hash(line) == hash(parse_line("sudo  rm -rf x"))
    assert line.commands is not None and line.commands[0].layers()[1].program == "rm"
    runuser = WRAPPERS["runuser"]
    assert runuser.code == SU.code and runuser.operands == -1 and runuser.bare is None
    assert "--user" in runuser.valued and "--user" not in SU.valued
    assert Wrapper() == Wrapper(frozenset(), bare=()) and hash(Wrapper()) == hash(Wrapper())


def test_session_and_extension_types_keep_their_semantics(tmp_path: Path) -> None:
    space = Workspace.create(tmp_path, [tmp_path / "other"])
    assert space == Workspace((tmp_path.resolve(), (tmp_path / "other").resolve()))
    assert space.root == tmp_path.resolve() and hash(space) == hash(Workspace(space.roots))
    with pytest.raises(AttributeError):
        space.roots = ()  # type: ignore[misc]
    team = Subagents(None, lambda tools: "", default_model="m")  # type: ignore[arg-type]
    assert team.kinds == {} and team.kinds is not Subagents(None, str).kinds  # type: ignore[arg-type]
    servers, _ = parse_servers({"s": {"command": "srv", "args": ["-v"]}}, "config.toml")
    assert servers == [McpServerConfig("s", "config.toml", "srv", ("-v",))]
    assert servers[0].env == {} and servers[0].timeout == 30.0
    assert PluginTools(()) == PluginTools(tools=(), warnings=())
