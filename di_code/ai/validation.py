"""Tool-argument validation: the model's arguments are untrusted input.

One Draft 2020-12 validator is built per schema and reused, since checking the schema itself
on every call costs forty times more than validating the arguments. Before it, a schema of the
common keywords is compiled once into a fast check (`schema_check`); when that says valid,
jsonschema is not needed at all, otherwise jsonschema decides and words every error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from di_code.ai.codec import MAX_JSON_DEPTH
from di_code.ai.foreign_names import adopt
from di_code.ai.schema_check import Check, compile_schema
from di_code.system.errors import DiCodeError
from di_code.system.first_use import import_off_loop

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

RECEIVED_LIMIT = 500


class ToolLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...


class ToolArgumentsError(DiCodeError, ValueError):
    """The arguments do not match the tool's schema; the message is written for the model."""


_T = TypeVar("_T")
_validators: dict[int, tuple[dict[str, Any], Validator]] = {}
_checks: dict[int, tuple[dict[str, Any], Check | None]] = {}


def _cached(
    cache: dict[int, tuple[dict[str, Any], _T]],
    schema: dict[str, Any],
    build: Callable[[dict[str, Any]], _T],
) -> _T:
    """Built once per schema object (kept alive by the cache, so its id is not reused)."""
    cached = cache.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    value = build(schema)
    cache[id(schema)] = (schema, value)
    return value


def _validator_for(schema: dict[str, Any]) -> Validator:
    return _cached(_validators, schema, _build_validator)


def _build_validator(schema: dict[str, Any]) -> Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema)


def _surely_valid(schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """The fast check's verdict; False also when it cannot tell (then jsonschema decides)."""
    check = _cached(_checks, schema, compile_schema)
    if check is None:
        return False
    try:
        return check(arguments)
    except Exception:  # an unusual value (a complex number, deep nesting): not ours to judge
        return False


def validate_tool_arguments(tool: ToolLike, arguments: Any) -> dict[str, Any]:
    """Return a deep copy of valid arguments (other agents' names for them taken under the
    tool's own: `foreign_names`); raise ToolArgumentsError otherwise."""
    adopted = _adopted(tool, arguments)
    return _judged(tool, arguments, adopted, _surely_valid(tool.parameters, adopted))


async def checked_tool_arguments(tool: ToolLike, arguments: Any) -> dict[str, Any]:
    """validate_tool_arguments for async code: when the fast check cannot vouch for the
    arguments, jsonschema is imported off the loop first (system/first_use.py)."""
    adopted = _adopted(tool, arguments)
    surely_valid = _surely_valid(tool.parameters, adopted)
    if not surely_valid:
        await import_off_loop("jsonschema")
    return _judged(tool, arguments, adopted, surely_valid)


def _adopted(tool: ToolLike, arguments: Any) -> dict[str, Any]:
    """The arguments under the tool's own names; ToolArgumentsError when not an object."""
    if not isinstance(arguments, dict):
        raise ToolArgumentsError(
            _message(
                tool.name,
                [f"  - /: arguments must be a JSON object, got {_kind(arguments)}"],
                arguments,
            )
        )
    adopted: dict[str, Any] = adopt(tool.parameters, arguments)
    return adopted


def _judged(
    tool: ToolLike, given: dict[str, Any], arguments: dict[str, Any], surely_valid: bool
) -> dict[str, Any]:
    """A copy of `arguments` (adopted from `given`) when jsonschema finds no error in them,
    or the fast check already vouched for them."""
    schema = tool.parameters
    if not surely_valid:
        errors = list(_validator_for(schema).iter_errors(arguments))
        if errors:
            lines = sorted({f"  - {_path(error)}: {error.message}" for error in errors})
            raise ToolArgumentsError(_message(tool.name, lines, given))
    copied: dict[str, Any] = _deep_copy(arguments)
    return copied


def _path(error: Any) -> str:
    parts = [str(part) for part in error.absolute_path]
    if error.validator == "required" and isinstance(error.instance, dict):
        # One error per missing name, all with the same instance: the message says which.
        missing = [name for name in error.validator_value if name not in error.instance]
        named = [name for name in missing if error.message.startswith(repr(name))]
        if named or missing:
            parts.append(str((named or missing)[0]))
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
        if not value:
            return "an empty string"
        try:  # kept as text by the message builder: not JSON, or JSON nested too deep
            json.loads(value)
        except ValueError:
            return "text that is not valid JSON"
        except RecursionError:
            pass
        return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
    return "null" if value is None else type(value).__name__


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _deep_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_deep_copy(item) for item in value]
    return value
