"""Messages and events survive a trip through JSON; bad JSON gives a one-line CodecError."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from di_code.agent.events import MessageUpdateEvent, TurnEndEvent
from di_code.ai import (
    AssistantMessage,
    ImageContent,
    TextContent,
    TextDeltaEvent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from di_code.ai.codec import CodecError, message_from_dict, to_dict
from di_code.ai.types import Cost

text = st.text(max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
user = st.builds(
    UserMessage,
    st.lists(st.builds(TextContent, text) | st.builds(ImageContent, text, text), max_size=3),
    st.integers(0, 2**40),
)
assistant = st.builds(
    AssistantMessage,
    st.lists(
        st.builds(TextContent, text)
        | st.builds(ThinkingContent, text, st.none() | text)
        | st.builds(
            ToolCall,
            text,
            text,
            st.dictionaries(text, json_values, max_size=3),
            st.none() | text,
        ),
        max_size=3,
    ),
    text,
    text,
    st.builds(Usage, st.integers(0, 10**6), st.integers(0, 10**6), cost=st.builds(Cost)),
    st.sampled_from(["stop", "length", "tool_use", "error", "aborted"]),
    st.integers(0, 2**40),
    st.none() | text,
)
tool_result = st.builds(
    ToolResultMessage,
    text,
    text,
    st.lists(st.builds(TextContent, text), max_size=2),
    st.booleans(),
    st.integers(0, 2**40),
    json_values,
)


@given(user | assistant | tool_result)
def test_every_message_round_trips_through_json(message: object) -> None:
    encoded = json.dumps(to_dict(message))
    assert message_from_dict(json.loads(encoded)) == message


def test_the_tag_comes_first_and_names_are_snake_case() -> None:
    result = ToolResultMessage("c1", "bash", [TextContent("ok")], True, 5, {"exit_code": 1})
    data = to_dict(result)
    assert list(data)[:3] == ["role", "tool_call_id", "tool_name"]
    assert data["is_error"] is True and data["content"] == [{"type": "text", "text": "ok"}]


def test_events_serialize_with_their_type_first() -> None:
    data = to_dict(MessageUpdateEvent(TextDeltaEvent(0, "hi")))
    assert data == {
        "type": "message_update",
        "event": {"type": "text_delta", "content_index": 0, "delta": "hi"},
    }
    turn_end = to_dict(TurnEndEvent(AssistantMessage([], "p", "m", timestamp=1), []))
    assert list(turn_end) == ["type", "message", "tool_results"]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([], "message must be an object"),
        ({"role": "robot", "content": []}, "unknown message role 'robot'"),
        ({"role": "user", "content": "hi"}, "message content must be a list"),
        ({"role": "user", "content": [{"type": "video"}]}, "unknown content type 'video'"),
        (
            {"role": "user", "content": [{"type": "tool_call", "id": "1", "name": "x"}]},
            "content type 'tool_call' is not allowed here",
        ),
        (
            {
                "role": "assistant",
                "content": [],
                "provider": "p",
                "model": "m",
                "stop_reason": "maybe",
            },
            "unknown stop_reason 'maybe'",
        ),
        ({"role": "user", "content": [{"type": "text", "text": 3}]}, "'text' must be a string"),
    ],
)
def test_bad_json_is_a_codec_error(data: object, reason: str) -> None:
    with pytest.raises(CodecError) as caught:
        message_from_dict(data)
    assert str(caught.value) == reason
