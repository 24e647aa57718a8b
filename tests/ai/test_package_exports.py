"""`di_code.ai` exports its public names lazily: every name works, importing it costs nothing."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import di_code.ai
from di_code.system.lazy_exports import exported_names
from tests.support.imports import loaded_modules, offenders

# Importing the package, or only the data types, must not start the stream machinery: the
# settings and the model registry need a type or two, and `di-code --help` imports them.
NOT_FOR_TYPES = (
    "asyncio",
    "jsonschema",
    "httpx",
    "di_code.system.abort",
    "di_code.ai.events",
    "di_code.ai.stream",
    "di_code.ai.message_builder",
    "di_code.ai.validation",
    "di_code.ai.providers",
)


HOMES = exported_names(Path(di_code.ai.__file__))


def test_the_public_names_are_what_the_type_checking_block_imports() -> None:
    assert sorted(HOMES) == di_code.ai.__all__
    spec_names = {"AbortController", "AbortSignal", "validate_tool_arguments", "ToolArgumentsError"}
    assert spec_names | {"UserMessage", "StreamEvent", "Model"} <= set(di_code.ai.__all__)


@pytest.mark.parametrize("name", sorted(HOMES))
def test_every_public_name_is_the_submodule_object(name: str) -> None:
    module, original = HOMES[name]
    assert getattr(di_code.ai, name) is getattr(importlib.import_module(module), original)
    assert name in dir(di_code.ai)


def test_star_import_gives_exactly_the_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from di_code.ai import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(di_code.ai.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = di_code.ai.Nope  # type: ignore[attr-defined]
    with pytest.raises(ImportError):
        exec("from di_code.ai import Nope", {})


@pytest.mark.parametrize(
    "code",
    [
        "import di_code.ai",
        "from di_code.ai import UserMessage, Model",
        "import di_code.ai.types",
        "import di_code.config.settings, di_code.config.models, di_code.config.selection, "
        "di_code.config.system_prompt",
    ],
)
def test_data_types_and_config_import_no_machinery(code: str) -> None:
    loaded, _ = loaded_modules(code)
    assert offenders(loaded, NOT_FOR_TYPES) == []


def test_a_stream_name_loads_its_module_on_first_use() -> None:
    loaded, _ = loaded_modules("import di_code.ai; di_code.ai.AbortController")
    assert {"di_code.system.abort", "asyncio"} <= loaded
    assert "di_code.ai.validation" not in loaded
