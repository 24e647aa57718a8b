"""`run`'s output formats (README, Output formats and exit codes): text, json (one result object)
and stream-json (a line per AgentEvent, then the result object).

Everything written goes through `Writer`, which hides every known secret (the one redaction
of di_code.ai.redaction): no output may ever carry a key; on a terminal it also shows control
and invisible characters visibly (`visible`). JSON lines escape those characters themselves.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, Literal, TextIO, TypeAlias

import msgspec

from di_code.agent.events import (
    AgentEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    TurnEndEvent,
)
from di_code.agent.tool import usage_in_details
from di_code.ai.budget import RequestBudget
from di_code.ai.codec import to_dict
from di_code.ai.redaction import redact
from di_code.ai.reply_notes import usage_known
from di_code.ai.types import AssistantMessage, Usage
from di_code.system.stop_signals import output_closed

_PLAIN = re.compile("[\t\n\x20-\x7e]*")
"""Text with nothing for the sanitizer to do: `run` then need not load the UI's."""

OutputFormat: TypeAlias = Literal["text", "json", "stream-json"]
OUTPUT_FORMATS: tuple[OutputFormat, ...] = ("text", "json", "stream-json")


class Writer(msgspec.Struct):
    stream: TextIO

    def line(self, text: str) -> None:
        """Write one line; on stdout whose reader is gone (`| head`), stop quietly instead
        (di_code.system.stop_signals.output_closed: exit 141, as a Unix tool ends)."""
        if self.stream.isatty():
            text = sanitized(text)
        try:
            _write_whole(self.stream, redact(text) + "\n")
        except BrokenPipeError:
            if self.stream is not sys.stdout:
                raise
            output_closed()


def _write_whole(stream: TextIO, text: str) -> None:
    """Write `text` and flush, raising BrokenPipeError if the reader leaves before its end.
    Straight to the descriptor when there is one: a write that a pipe takes only in part
    before its reader ends (`| head -c 1` on a long answer) is dropped quietly by Python's
    buffered layer (the rest never written, no error), so the exit would be 0."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # an in-memory stream: nothing can leave half-way
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    data = memoryview(text.encode(stream.encoding, stream.errors or "strict"))
    while data:
        data = data[os.write(fd, data) :]


def sanitized(text: str) -> str:
    """`text` as a terminal may show it: control and invisible characters shown visibly."""
    if _PLAIN.fullmatch(text):
        return text
    from di_code.system.safe_text import visible

    return visible(text)


def json_text(data: Any) -> str:
    """`data` as one line of JSON, with the characters a terminal would act on escaped."""
    text = json.dumps(data, ensure_ascii=False)
    if _PLAIN.fullmatch(text):
        return text
    from di_code.system.safe_text import json_escaped

    return json_escaped(text)


class RunTally(msgspec.Struct):
    """Counts turns and adds up usage as the events go by; the prompt's requests of every
    kind (its subagents', compaction's) are read from the budget they were counted in."""

    budget: RequestBudget | None = None
    num_turns: int = 0
    usages: list[Usage] = msgspec.field(default_factory=list)
    _local: bool = False
    """The turn ends in a message the loop made without a request (the turn limit, an abort):
    its start already carries its stop reason. It is not a model request to count."""

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, MessageStartEvent) and isinstance(event.message, AssistantMessage):
            self._local = event.message.stop_reason in ("error", "aborted")
        if isinstance(event, TurnEndEvent) and not self._local:
            self.num_turns += 1
            self.usages.append(event.message.usage)
        if isinstance(event, ToolExecutionEndEvent):  # a subagent's requests count too
            usage = usage_in_details(event.result.details)
            if usage is not None:
                self.usages.append(usage)

    @property
    def num_requests(self) -> int:
        return self.budget.made if self.budget is not None else self.num_turns


def total_usage(usages: Sequence[Usage]) -> Usage:
    """The sum of several requests' usage, cost included."""
    return sum(usages, Usage())


_TOKEN_FIELDS = ("input", "output", "cache_read", "cache_write", "total_tokens")


def usage_summary(usages: Sequence[Usage]) -> dict[str, Any]:
    """The summed usage; replies whose server reported none are counted in `unreported_turns`
    and never added as zeros: with none reported at all, the counts are null (unknown)."""
    known = [usage for usage in usages if usage_known(usage)]
    summary: dict[str, Any] = to_dict(total_usage(known))
    if len(known) < len(usages):
        summary["unreported_turns"] = len(usages) - len(known)
        if not known:
            summary.update(dict.fromkeys((*_TOKEN_FIELDS, "cost")))
    return summary


def result_object(
    final: AssistantMessage, tally: RunTally, session_id: str | None, answer: str | None = None
) -> dict[str, Any]:
    """The json format's single object, also the last line of stream-json; `answer` stands
    for the model's last text (a plan run's plan)."""
    is_error = final.stop_reason in ("error", "aborted")
    return {
        "type": "result",
        "is_error": is_error,
        "stop_reason": final.stop_reason,
        "result": final.error_message if is_error else (answer or final.text),
        "session_id": session_id,
        "num_turns": tally.num_turns,
        "num_requests": tally.num_requests,
        "usage": usage_summary(tally.usages),
    }


def event_line(event: AgentEvent) -> str:
    """One stream-json line: the event as JSON, `type` first."""
    return json_text(to_dict(event))


def result_line(
    final: AssistantMessage, tally: RunTally, session_id: str | None, answer: str | None = None
) -> str:
    return json_text(result_object(final, tally, session_id, answer))


def notify_stderr(text: str) -> None:
    """One line on stderr; it may quote a project's file, so control characters are shown."""
    print(f"di-code: {sanitized(text)}", file=sys.stderr, flush=True)
