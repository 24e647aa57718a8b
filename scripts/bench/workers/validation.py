"""Figure 7 worker: µs per call validating edit-style arguments, three ways."""

import json
import sys
import time
from collections.abc import Callable

import jsonschema

from di_code.ai import validate_tool_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1},
        "mode": {"type": "string", "enum": ["replace", "insert", "append"]},
        "edits": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "old_text": {"type": "string"},
                    "new_text": {"type": "string"},
                    "replace_all": {"type": "boolean"},
                },
                "required": ["old_text", "new_text"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
}
ARGUMENTS = {
    "path": "src/app/main.py",
    "mode": "replace",
    "edits": [
        {
            "old_text": f"def old_{i}(x):\n    return x + {i}\n",
            "new_text": f"def new_{i}(x: int) -> int:\n    return x * {i}\n",
        }
        for i in range(3)
    ],
}


class Tool:
    name = "edit"
    parameters = SCHEMA


def per_call_us(call: Callable[[], object], budget_s: float) -> float:
    """Calls until the time budget is spent; µs per call (warm: the first call is untimed)."""
    call()
    n, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < budget_s:
        for _ in range(10):
            call()
        n += 10
    return elapsed / n * 1e6


def main(budget_s: float) -> dict[str, float]:
    tool = Tool()
    validator = jsonschema.Draft202012Validator(SCHEMA)
    return {
        "di_code": per_call_us(lambda: validate_tool_arguments(tool, ARGUMENTS), budget_s),
        "validate_each_time": per_call_us(lambda: jsonschema.validate(ARGUMENTS, SCHEMA), budget_s),
        "validator_once": per_call_us(lambda: validator.validate(ARGUMENTS), budget_s),
    }


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1])["budget_s"])))
