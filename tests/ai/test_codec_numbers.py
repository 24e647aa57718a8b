"""Numbers in untrusted message JSON: the fast path for plain ints and floats keeps every check."""

from __future__ import annotations

from typing import Any

import pytest

from di_code.ai.codec import CodecError, message_from_dict
from di_code.ai.types import AssistantMessage, Cost, Usage


def assistant(usage: dict[str, Any], timestamp: Any = 5) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [],
        "provider": "p",
        "model": "m",
        "usage": usage,
        "timestamp": timestamp,
    }


class Tokens(int):
    """An int subclass, as a caller building dicts in Python might pass."""


def test_plain_and_unusual_numbers_decode_to_ints_and_floats() -> None:
    message = message_from_dict(
        assistant({"input": 3, "output": 4.9, "total_tokens": Tokens(7), "cost": {"total": 2}}, 6.5)
    )
    assert isinstance(message, AssistantMessage)
    assert message.usage == Usage(input=3, output=4, total_tokens=7, cost=Cost(total=2.0))
    assert type(message.usage.total_tokens) is int and type(message.usage.cost.total) is float
    assert message.timestamp == 6


@pytest.mark.parametrize(
    ("usage", "timestamp", "reason"),
    [
        ({}, True, "'timestamp' must be a number"),
        ({}, "5", "'timestamp' must be a number"),
        ({}, float("inf"), "'timestamp' must be a finite number"),
        ({"output": float("nan")}, 5, "'output' must be a finite number"),
        ({"input": False}, 5, "'input' must be a number"),
        ({"cost": {"input": True}}, 5, "'input' must be a number"),
        ({"cost": {"total": 10**400}}, 5, "'total' is too large"),
        ({"cost": []}, 5, "cost must be an object"),
    ],
)
def test_bad_numbers_are_codec_errors(usage: dict[str, Any], timestamp: Any, reason: str) -> None:
    with pytest.raises(CodecError) as caught:
        message_from_dict(assistant(usage, timestamp))
    assert str(caught.value) == reason
