"""Tool-argument validation: the model's arguments are untrusted input.

One Draft 2020-12 validator is built per schema and reused, since checking the schema itself
on every call costs forty times more than validating the arguments.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

RECEIVED_LIMIT = 500


class ToolLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...


class ToolArgumentsError(ValueError):
    """The arguments do not match the tool's schema; the message is written for the model."""


_validators: dict[int, tuple[dict[str, Any], Validator]] = {}


def _validator_for(schema: dict[str, Any]) -> Validator:
    cached = _validators.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)
    _validators[id(schema)] = (schema, validator)
    return validator


def validate_tool_arguments(tool: ToolLike, arguments: Any) -> dict[str, Any]:
    """Return a deep copy of valid arguments; raise ToolArgumentsError otherwise."""
    if not isinstance(arguments, dict):
        raise ToolArgumentsError(
            _message(
                tool.name,
                [f"  - /: arguments must be a JSON object, got {_kind(arguments)}"],
                arguments,
            )
        )
    errors = list(_validator_for(tool.parameters).iter_errors(arguments))
    if errors:
        lines = sorted({f"  - {_path(error)}: {error.message}" for error in errors})
        raise ToolArgumentsError(_message(tool.name, lines, arguments))
    copied: dict[str, Any] = _deep_copy(arguments)
    return copied


def _path(error: Any) -> str:
    parts = [str(part) for part in error.absolute_path]
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [name for name in error.validator_value if name not in error.instance]
        if missing:
            parts.append(str(missing[0]))
    return "/" + "/".join(parts)


def _message(name: str, lines: list[str], arguments: Any) -> str:
    received = json.dumps(arguments, ensure_ascii=False, default=str)
    if len(received) > RECEIVED_LIMIT:
        received = received[:RECEIVED_LIMIT] + "..."
    return "\n".join(
        [f'Invalid arguments for tool "{name}":', *lines, f"Received arguments: {received}"]
    )


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "text that is not valid JSON" if value else "an empty string"
    return "null" if value is None else type(value).__name__


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _deep_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_deep_copy(item) for item in value]
    return value
