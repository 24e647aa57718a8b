"""The compiled fast check never calls arguments valid that jsonschema rejects."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from di_code.ai import ToolArgumentsError, validate_tool_arguments, validation
from di_code.ai.schema_check import compile_schema

KEYS = ["a", "b", "c"]
TYPES = ["string", "integer", "number", "boolean", "object", "array", "null"]

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, 1.0, -1.5, 0.5, 2.0, 1e300])
    | st.text("ab", max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner),
    max_leaves=6,
)
numbers = st.integers(-2, 2) | st.sampled_from([0.5, -1.5, 1.0, 2.0])
lengths = st.integers(0, 3)
type_names = st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), max_size=3, unique=True)


def _keywords(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A few keywords per schema: cheap to draw, and combinations still vary."""
    options: dict[str, st.SearchStrategy[Any]] = {
        "type": type_names,
        "enum": st.lists(values, max_size=3),
        "const": values,
        "minimum": numbers,
        "maximum": numbers,
        "exclusiveMinimum": numbers,
        "exclusiveMaximum": numbers,
        "minLength": lengths,
        "maxLength": lengths,
        "minItems": lengths,
        "maxItems": lengths,
        "properties": st.dictionaries(st.sampled_from(KEYS), children, max_size=3),
        "required": st.lists(st.sampled_from(KEYS), max_size=3, unique=True),
        "additionalProperties": children,
        "items": children,
        "description": st.text(max_size=5),
        "default": values,
    }
    chosen = st.lists(st.sampled_from(sorted(options)), max_size=4, unique=True)
    return chosen.flatmap(lambda names: st.fixed_dictionaries({n: options[n] for n in names}))


schemas = st.recursive(st.booleans() | _keywords(st.booleans()), _keywords, max_leaves=4)


def instances_for(schema: Any) -> st.SearchStrategy[Any]:
    """Any JSON value, or one shaped by the schema, so that many instances are valid."""
    if not isinstance(schema, dict):
        return values
    shaped: list[st.SearchStrategy[Any]] = [values]
    if "const" in schema:
        shaped.append(st.just(schema["const"]))
    if schema.get("enum"):
        shaped.append(st.sampled_from(schema["enum"]))
    if "properties" in schema:
        fields = {name: instances_for(sub) for name, sub in schema["properties"].items()}
        shaped.append(st.fixed_dictionaries({}, optional=fields))
    if isinstance(schema.get("items"), dict):
        shaped.append(st.lists(instances_for(schema["items"]), max_size=3))
    return st.one_of(shaped)


def jsonschema_valid(schema: Any, instance: Any) -> bool:
    return bool(Draft202012Validator(schema).is_valid(instance))


@settings(max_examples=150)
@given(st.data())
def test_the_fast_check_agrees_with_jsonschema(data: st.DataObject) -> None:
    schema = data.draw(schemas, label="schema")
    instance = data.draw(instances_for(schema), label="instance")
    check = compile_schema(schema)
    assert check is not None, "every generated schema is in the supported subset"
    expected = jsonschema_valid(schema, instance)
    event("valid" if expected else "invalid")
    if check(instance):  # the promise: never valid where jsonschema says invalid
        assert expected
    assert check(instance) == expected  # and on JSON values it is exact, so the fast path pays


@dataclass(frozen=True)
class Tool:
    parameters: Any
    name: str = "t"


def jsonschema_only(tool: Tool, arguments: Any) -> str | dict[str, Any]:
    with patch.object(validation, "_surely_valid", return_value=False):
        return outcome(tool, arguments)


def outcome(tool: Tool, arguments: Any) -> str | dict[str, Any]:
    try:
        return validate_tool_arguments(tool, arguments)
    except ToolArgumentsError as exc:
        return str(exc)


@settings(max_examples=60)
@given(st.data())
def test_errors_are_worded_by_jsonschema_exactly_as_without_the_fast_path(
    data: st.DataObject,
) -> None:
    schema = data.draw(_keywords(schemas), label="schema")
    arguments = data.draw(
        st.dictionaries(st.sampled_from(KEYS), values) | instances_for(schema), label="arguments"
    )
    tool = Tool(schema)
    assert outcome(tool, arguments) == jsonschema_only(tool, arguments)


def test_integer_follows_json_schema_not_python() -> None:
    check = compile_schema({"type": "integer"})
    assert check is not None
    assert check(3) and check(2.0)
    assert not check(True) and not check(2.5) and not check("3")


def test_enum_and_const_keep_true_apart_from_one() -> None:
    check = compile_schema({"enum": [1, [0]], "const": 1})
    assert check is not None
    assert check(1) and check(1.0)
    assert not check(True)
    only_list = compile_schema({"enum": [[0]]})
    assert only_list is not None
    assert only_list([0]) and not only_list([False])


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/$defs/x", "$defs": {"x": {}}},
        {"type": "string", "pattern": "^a"},
        {"type": "string", "format": "email"},
        {"anyOf": [{"type": "string"}]},
        {"type": "object", "patternProperties": {"^x": {}}},
        {"type": "array", "prefixItems": [{}]},
        {"type": "number", "multipleOf": 2},
        {"properties": {"a": {"oneOf": []}}},
        {"type": "text"},
        {"required": "a"},
        {"items": [{"type": "string"}]},
        {"minLength": "1"},
        {"maxItems": True},
        {"minimum": "0"},
        {"enum": "ab"},
        {"additionalProperties": 1},
        "a schema",
    ],
)
def test_anything_else_is_left_to_jsonschema(schema: Any) -> None:
    assert compile_schema(schema) is None


UNUSUAL_SCHEMA = {
    "type": "object",
    "properties": {"n": {"minimum": 0}, "xs": {"type": "array"}, "z": {"maximum": 0}},
}


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        ({"n": Decimal(-1)}, "  - /n: Decimal('-1') is less than the minimum of 0"),
        ({"xs": (1, 2)}, "  - /xs: (1, 2) is not of type 'array'"),
    ],
)
def test_values_json_cannot_hold_go_to_jsonschema(arguments: dict[str, Any], line: str) -> None:
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(Tool(UNUSUAL_SCHEMA), arguments)
    assert str(caught.value).splitlines()[1] == line


def test_a_check_that_raises_leaves_the_verdict_to_jsonschema() -> None:
    def broken(value: Any) -> bool:
        raise RuntimeError("cannot tell")

    schema = {"properties": {"n": {"type": "integer"}}}
    with patch.object(validation, "compile_schema", return_value=broken):
        assert validate_tool_arguments(Tool(schema), {"n": 1}) == {"n": 1}
        with pytest.raises(ToolArgumentsError) as caught:
            validate_tool_arguments(Tool(schema), {"n": "1"})
    assert str(caught.value).splitlines()[1] == "  - /n: '1' is not of type 'integer'"


def test_valid_arguments_do_not_import_jsonschema() -> None:
    code = (
        "import sys\n"
        "from di_code.ai import validate_tool_arguments\n"
        "class T:\n"
        "    name = 'edit'\n"
        "    parameters = {'type': 'object', 'properties': {'path': {'type': 'string'}}}\n"
        "print(validate_tool_arguments(T(), {'path': 'a'}) == {'path': 'a'})\n"
        "print('jsonschema' in sys.modules)\n"
        "try:\n"
        "    validate_tool_arguments(T(), {'path': 1})\n"
        "except ValueError:\n"
        "    print('jsonschema' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.split() == ["True", "False", "True"]
