"""validate_tool_arguments: the error format the model reads, copies, no coercion."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from di_code.ai import ToolArgumentsError, validate_tool_arguments

EDIT_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"old_text": {"type": "string"}, "new_text": {"type": "string"}},
                "required": ["old_text", "new_text"],
            },
        },
        "mode": {"enum": ["strict", "loose"]},
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Tool:
    name: str = "edit"
    parameters: dict[str, Any] = field(default_factory=lambda: EDIT_SCHEMA)


def error_for(arguments: Any) -> str:
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(Tool(), arguments)
    return str(caught.value)


def test_valid_arguments_come_back_as_a_deep_copy() -> None:
    arguments = {"path": "a.py", "edits": [{"old_text": "a", "new_text": "b"}]}
    validated = validate_tool_arguments(Tool(), arguments)
    assert validated == arguments
    validated["edits"][0]["new_text"] = "changed"
    assert arguments["edits"][0]["new_text"] == "b"


def test_no_type_coercion() -> None:
    echo = Tool("echo", {"type": "object", "properties": {"value": {"type": "string"}}})
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(echo, {"value": 42})
    assert str(caught.value).splitlines() == [
        'Invalid arguments for tool "echo":',
        "  - /value: 42 is not of type 'string'",
        'Received arguments: {"value": 42}',
    ]


def test_missing_required_field_names_its_path() -> None:
    lines = error_for({"path": "a.py"}).splitlines()
    assert lines[1] == "  - /edits: 'edits' is a required property"


def test_each_missing_field_gets_its_own_path() -> None:
    message = error_for({"path": "a.py", "edits": [{"oldText": "a", "newText": "b"}]})
    assert "  - /edits/0/old_text: 'old_text' is a required property" in message
    assert "  - /edits/0/new_text: 'new_text' is a required property" in message


def test_nested_problems_each_get_a_line() -> None:
    message = error_for({"path": 1, "edits": [{"old_text": "a"}], "mode": "other"})
    assert "  - /path: 1 is not of type 'string'" in message
    assert "  - /edits/0/new_text: 'new_text' is a required property" in message
    assert "  - /mode: 'other' is not one of ['strict', 'loose']" in message


def test_root_problems_use_slash() -> None:
    message = error_for({"path": "a", "edits": [], "extra": True})
    assert "  - /: Additional properties are not allowed ('extra' was unexpected)" in message


@pytest.mark.parametrize("arguments", [None, [], "not json {", 3])
def test_non_dict_arguments_are_invalid(arguments: Any) -> None:
    message = error_for(arguments)
    assert message.splitlines()[1].startswith("  - /: arguments must be a JSON object")
    assert message.splitlines()[-1] == f"Received arguments: {json.dumps(arguments)}"


def test_received_arguments_are_cut_to_500_characters() -> None:
    last = error_for({"path": "x" * 2000, "edits": 1}).splitlines()[-1]
    received = last.removeprefix("Received arguments: ")
    assert len(received) == 500 + len("...")
    assert received.endswith("...")


def test_the_validator_is_built_once_per_schema() -> None:
    from di_code.ai.validation import _validator_for

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert _validator_for(schema) is _validator_for(schema)
    assert _validator_for(schema) is not _validator_for(dict(schema))
