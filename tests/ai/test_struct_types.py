"""The data types on the start-up path are msgspec Structs (issue 36): built in C at import,
where a frozen slots dataclass generates and compiles its methods. What users of di_code.ai
rely on stays: positional and keyword construction, equality, hashing, immutability, and the
JSON field names the codec writes."""

from __future__ import annotations

import inspect

import msgspec
import pytest

import di_code.agent.events as agent_events
import di_code.ai.events as stream_events
import di_code.ai.types as ai_types
from di_code.agent.tool_call import ToolCallContext, ToolHooks
from di_code.ai.codec import to_dict
from di_code.ai.types import AssistantMessage, TextContent, Usage
from di_code.tools.policy import permissions

SETTINGS_TYPES = {"Model", "ModelCost"}
"""Read from settings and changed there with dataclasses.replace: they stay dataclasses."""


def _classes(module: object) -> list[type]:
    return [
        value
        for name, value in vars(module).items()
        if inspect.isclass(value) and value.__module__ == module.__name__  # type: ignore[attr-defined]
    ]


@pytest.mark.parametrize("module", [ai_types, stream_events, agent_events, permissions])
def test_every_data_type_of_the_start_up_path_is_a_struct(module: object) -> None:
    data_types = [
        cls
        for cls in _classes(module)
        if cls.__name__ not in SETTINGS_TYPES and not issubclass(cls, Exception)
    ]
    assert data_types
    assert [cls.__name__ for cls in data_types if not issubclass(cls, msgspec.Struct)] == []
    assert issubclass(ToolCallContext, msgspec.Struct) and issubclass(ToolHooks, msgspec.Struct)


def test_construction_equality_hashing_and_immutability_are_kept() -> None:
    assert TextContent("hi") == TextContent(text="hi")
    assert hash(TextContent("hi")) == hash(TextContent("hi"))
    assert TextContent("hi") != TextContent("ho")
    assert Usage(1, 2) + Usage(3, 4) == Usage(4, 6)
    with pytest.raises(AttributeError):
        TextContent("hi").text = "ho"  # type: ignore[misc]
    assert msgspec.structs.replace(TextContent("hi"), text="ho") == TextContent("ho")


def test_json_field_names_are_unchanged() -> None:
    message = AssistantMessage([TextContent("hi")], "openai", "m", timestamp=5)
    assert list(to_dict(message)) == [
        "role",
        "content",
        "provider",
        "model",
        "usage",
        "stop_reason",
        "timestamp",
        "error_message",
    ]
    assert to_dict(message)["content"] == [{"type": "text", "text": "hi"}]
    assert to_dict(stream_events.TextDeltaEvent(0, "h")) == {
        "type": "text_delta",
        "content_index": 0,
        "delta": "h",
    }
