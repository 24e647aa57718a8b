"""A fast "is it valid?" check for the JSON Schema subset that tool schemas use.

jsonschema spends most of a call on its general machinery (error objects, reference scopes,
dynamic keyword dispatch). Tool schemas almost always use a handful of keywords, so a schema
made only of those is compiled once into nested closures that answer valid or not.

The answer is only trusted when it is "valid": the caller runs jsonschema whenever this says
invalid (or raises), so jsonschema still decides every error and words it. The rules below
follow Draft 2020-12 as jsonschema implements it (e.g. 1.0 is an integer, True is not 1 in
`enum`); any other keyword makes `compile_schema` return None and jsonschema does it all.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Number
from typing import Any, TypeAlias

Check: TypeAlias = Callable[[Any], bool]

ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "deprecated", "readOnly"}
    | {"writeOnly"}
)
KEYWORDS = frozenset(
    {"type", "enum", "const", "properties", "required", "additionalProperties", "items"}
    | {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
    | {"minLength", "maxLength", "minItems", "maxItems"}
)


class _Unsupported(Exception):
    """The schema uses something this module does not implement."""


def compile_schema(schema: Any) -> Check | None:
    """A check for `schema`, or None when the schema is outside the supported subset."""
    try:
        return _compile(schema)
    except _Unsupported:
        return None


def _compile(schema: Any) -> Check:
    if schema is True:
        return _accept
    if schema is False:
        return _reject
    if not isinstance(schema, dict) or not schema.keys() <= KEYWORDS | ANNOTATIONS:
        raise _Unsupported
    parts = (
        _type_check(schema),
        _enum_check(schema),
        _object_check(schema),
        _array_check(schema),
        _string_check(schema),
        _number_check(schema),
    )
    return _all([check for check in parts if check is not None])


def _all(checks: list[Check]) -> Check:
    if not checks:
        return _accept
    if len(checks) == 1:
        return checks[0]

    def check(value: Any) -> bool:
        return all(one(value) for one in checks)

    return check


def _accept(value: Any) -> bool:
    return True


def _reject(value: Any) -> bool:
    return False


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, Number)


_TYPES: dict[str, Check] = {
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "null": lambda value: value is None,
}


def _type_check(schema: dict[str, Any]) -> Check | None:
    if "type" not in schema:
        return None
    names = schema["type"]
    names = [names] if isinstance(names, str) else names
    if not isinstance(names, list) or not all(name in _TYPES for name in names):
        raise _Unsupported
    tests = [_TYPES[name] for name in names]
    if len(tests) == 1:
        return tests[0]
    return lambda value: any(test(value) for test in tests)


def _enum_check(schema: dict[str, Any]) -> Check | None:
    """`enum` and `const` in one check: one of the allowed values, and the constant."""
    if "enum" not in schema and "const" not in schema:
        return None
    allowed = schema.get("enum", [])
    if not isinstance(allowed, list):
        raise _Unsupported
    checks_enum, checks_const = "enum" in schema, "const" in schema
    const = schema.get("const")

    def check(value: Any) -> bool:
        if checks_enum and not any(same_json(value, each) for each in allowed):
            return False
        return not checks_const or same_json(value, const)

    return check


def same_json(one: Any, two: Any) -> bool:
    """Equal as JSON values: True is not 1, 1 is 1.0. Anything unusual is "not equal"."""
    if isinstance(one, bool) or isinstance(two, bool):
        return one is two
    if one is None or two is None:
        return one is two
    if isinstance(one, str) or isinstance(two, str):
        return isinstance(one, str) and isinstance(two, str) and one == two
    if isinstance(one, int | float) and isinstance(two, int | float):
        return one == two
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(map(same_json, one, two))
    if isinstance(one, dict) and isinstance(two, dict):
        return len(one) == len(two) and all(
            key in two and same_json(item, two[key]) for key, item in one.items()
        )
    return False


def _object_check(schema: dict[str, Any]) -> Check | None:
    if not schema.keys() & {"properties", "required", "additionalProperties"}:
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not all(isinstance(k, str) for k in properties):
        raise _Unsupported
    if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
        raise _Unsupported
    checks = {name: _compile(sub) for name, sub in properties.items()}
    extra = _additional(schema.get("additionalProperties", True))

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name in required:
            if name not in value:
                return False
        for key, item in value.items():
            sub = checks.get(key, extra)
            if sub is not None and not sub(item):
                return False
        return True

    return check


def _additional(schema: Any) -> Check | None:
    """None when any extra property is allowed, which skips calling a check at all."""
    if schema is True:
        return None
    if schema is False or isinstance(schema, dict):
        return _compile(schema)
    raise _Unsupported


def _array_check(schema: dict[str, Any]) -> Check | None:
    if not schema.keys() & {"items", "minItems", "maxItems"}:
        return None
    items = _compile(schema.get("items", True))
    low, high = _length(schema, "minItems"), _length(schema, "maxItems")

    def check(value: Any) -> bool:
        if not isinstance(value, list):
            return True
        if (low is not None and len(value) < low) or (high is not None and len(value) > high):
            return False
        return items is _accept or all(map(items, value))

    return check


def _string_check(schema: dict[str, Any]) -> Check | None:
    low, high = _length(schema, "minLength"), _length(schema, "maxLength")
    if low is None and high is None:
        return None

    def check(value: Any) -> bool:
        if not isinstance(value, str):
            return True
        return not (
            (low is not None and len(value) < low) or (high is not None and len(value) > high)
        )

    return check


def _number_check(schema: dict[str, Any]) -> Check | None:
    names = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    bounds = [schema.get(name) for name in names]
    if all(bound is None for bound in bounds):
        return None
    if not all(bound is None or _is_plain_number(bound) for bound in bounds):
        raise _Unsupported
    low, high, above, below = bounds

    def check(value: Any) -> bool:
        if not _is_number(value):
            return True
        return not (
            (low is not None and value < low)
            or (high is not None and value > high)
            or (above is not None and value <= above)
            or (below is not None and value >= below)
        )

    return check


def _length(schema: dict[str, Any], name: str) -> int | None:
    if name not in schema:
        return None
    value = schema[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Unsupported
    return value


def _is_plain_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float)
