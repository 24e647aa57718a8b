"""Tool-argument validation: the model's arguments are untrusted input, judged by jsonschema.

One Draft 2020-12 validator is built per schema and reused, since checking the schema itself
on every call costs forty times more than validating the arguments. jsonschema is imported on a
thread as soon as a reply begins a tool call, while its arguments stream in
(`warm_up_validation`): a run with no tool call never imports it, and the import does not
compete with the set-up or the request. A schema comes from outside too (an MCP server's, a
plugin's): its `$ref`s resolve within it and to the published meta-schemas only, never by
fetching a URL (jsonschema's default resolver would, on the loop, with no timeout), and a
`pattern` in it that backtracks without end is stopped after CHECK_TIME (system/time_bound):
the call is refused.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any, Protocol

from di_code.ai.codec import MAX_JSON_DEPTH, refuse_constant
from di_code.ai.foreign_names import adopt
from di_code.system.errors import DiCodeError
from di_code.system.first_use import import_here, import_off_loop
from di_code.system.time_bound import TookTooLong, time_bound

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

RECEIVED_LIMIT = 500
CHECK_TIME = 5.0
"""Seconds the arguments may take to check; far more than any schema that ends needs."""
TOO_LONG = (
    f"checking the arguments against the tool's schema took more than {CHECK_TIME:g} s "
    "(a `pattern` in it that backtracks?): the call is refused"
)
JSONSCHEMA = "jsonschema"


class ToolLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...


class ToolArgumentsError(DiCodeError, ValueError):
    """The arguments do not match the tool's schema; the message is written for the model."""


_validators: dict[int, tuple[dict[str, Any], Validator]] = {}
_warming: threading.Thread | None = None


def _validator_for(schema: dict[str, Any]) -> Validator:
    """Built once per schema object (kept alive by the cache, so its id is not reused)."""
    cached = _validators.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    from jsonschema import Draft202012Validator
    from jsonschema_specifications import REGISTRY as META_SCHEMAS

    validator = Draft202012Validator(schema, registry=META_SCHEMAS)
    _validators[id(schema)] = (schema, validator)
    return validator


def warm_up_validation() -> None:
    """Import jsonschema on a helper thread, once, while the caller goes on."""
    global _warming
    if _warming is None:
        _warming = threading.Thread(target=import_here, args=([JSONSCHEMA],), daemon=True)
        _warming.start()


def validate_tool_arguments(tool: ToolLike, arguments: Any) -> dict[str, Any]:
    """Return a deep copy of valid arguments (other agents' names for them taken under the
    tool's own: `foreign_names`); raise ToolArgumentsError otherwise."""
    return _judged(tool, arguments, _adopted(tool, arguments))


async def checked_tool_arguments(tool: ToolLike, arguments: Any) -> dict[str, Any]:
    """validate_tool_arguments for async code: jsonschema is imported off the loop first (at
    once when the warm-up has done it; system/first_use.py)."""
    adopted = _adopted(tool, arguments)
    await import_off_loop(JSONSCHEMA)
    return _judged(tool, arguments, adopted)


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


def _judged(tool: ToolLike, given: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """A copy of `arguments` (adopted from `given`) when jsonschema finds no error in them."""
    try:
        with time_bound(CHECK_TIME):
            errors = list(_validator_for(tool.parameters).iter_errors(arguments))
    except TookTooLong:
        raise ToolArgumentsError(_message(tool.name, [f"  - /: {TOO_LONG}"], given)) from None
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
            json.loads(value, parse_constant=refuse_constant)
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
