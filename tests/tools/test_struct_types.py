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

from di_code.tools.lsp import door, report, servers
from di_code.tools.lsp.door import LanguageServers, Slot
from di_code.tools.lsp.report import Problem
from di_code.tools.lsp.servers import Catalog, ServerSpec, catalog

MODULES = [door, report, servers]


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
