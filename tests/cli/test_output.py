"""Output formats: the json result object, stream-json lines and key redaction."""

from __future__ import annotations

import io
import json

from di_code.agent.events import TurnEndEvent, TurnStartEvent
from di_code.ai.redaction import register
from di_code.ai.types import AssistantMessage, Cost, TextContent, Usage
from di_code.cli.output import RunTally, Writer, event_line, result_object, total_usage


def message(
    text: str, usage: Usage, stop: str = "stop", error: str | None = None
) -> AssistantMessage:
    return AssistantMessage(
        [TextContent(text)],
        "openai",
        "m",
        usage,
        stop,
        1,
        error,  # type: ignore[arg-type]
    )


def test_result_object_sums_usage_over_turns() -> None:
    tally = RunTally()
    first = Usage(10, 5, 1, 0, 16, Cost(0.1, 0.2, 0.0, 0.0, 0.3))
    second = Usage(20, 7, 0, 2, 29, Cost(0.2, 0.1, 0.0, 0.05, 0.35))
    tally(TurnStartEvent())
    tally(TurnEndEvent(message("", first, "tool_use"), []))
    tally(TurnEndEvent(message("done", second), []))
    result = result_object(message("done", second), tally, "s1")
    assert list(result)[:1] == ["type"]
    assert result["type"] == "result" and result["is_error"] is False
    assert result["stop_reason"] == "stop" and result["result"] == "done"
    assert result["session_id"] == "s1" and result["num_turns"] == 2
    assert result["usage"]["input"] == 30 and result["usage"]["total_tokens"] == 45
    assert abs(result["usage"]["cost"]["total"] - 0.65) < 1e-9


def test_an_error_result_carries_the_error_message() -> None:
    failed = message("partial", Usage(), "error", "openai: HTTP 500: boom")
    result = result_object(failed, RunTally(), None)
    assert result["is_error"] is True and result["result"] == "openai: HTTP 500: boom"


def test_total_of_nothing_is_zero() -> None:
    assert total_usage([]) == Usage()


def test_event_lines_put_type_first() -> None:
    line = event_line(TurnEndEvent(message("hi", Usage()), []))
    data = json.loads(line)
    assert next(iter(data)) == "type" and data["type"] == "turn_end"
    assert data["message"]["role"] == "assistant"


def test_writer_redacts_secrets() -> None:
    sink = io.StringIO()
    register("sk-secret", "")
    Writer(sink).line("key sk-secret here")
    assert sink.getvalue() == "key *** here\n"
