"""Scripted turns in a protocol-neutral form, rendered as OpenAI or Anthropic SSE events.

Used by `tests.support.llm_server`; the renderers are pure: a Turn in, a list of SSE event
byte strings out (one list item per event, so faults can cut the stream between events).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

Fault = Literal["drop", "malformed", "stall"]
NeutralStop = Literal["stop", "length", "tool_use"]

WHOLE = 1 << 20
"""A Turn's `chunk_size` that sends each text and each call's arguments (up to 1 MB) in one
delta: for a big payload whose size a test checks but not how it streams. The default 4
characters make a 240 KB answer 60,000 events, each a read, a parse and a write in di-code
(30-40 s on a loaded machine, against 1 s for the same answer whole)."""


@dataclass(frozen=True)
class ToolCallSpec:
    name: str
    arguments: dict[str, Any] | str
    """A dict is sent as JSON; a string is sent verbatim (to script invalid JSON)."""
    id: str = "call_1"

    @property
    def arguments_text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True)
class Turn:
    """One scripted model reply: thinking, then text, then tool calls, then the stop reason."""

    text: str = ""
    thinking: str = ""
    thinking_signature: str = "sig-1"
    tool_calls: tuple[ToolCallSpec, ...] = ()
    stop_reason: NeutralStop | None = None
    """Default: tool_use when there are tool calls, else stop."""
    input_tokens: int = 10
    """With `input_tokens` and `output_tokens` both 0, the OpenAI stream has no usage chunk
    (a server that ignores `stream_options.include_usage`)."""
    output_tokens: int = 5
    chunk_size: int = 4
    """Characters per text, thinking or arguments delta (WHOLE: each in one)."""
    delay: float = 0.0
    """Seconds between events (lets a test abort or press Ctrl-C mid-stream)."""
    first_delay: float = 0.0
    """Seconds between the headers and the first event (a model slow to answer, a local model
    reading the prompt)."""
    fault: Fault | None = None
    fault_after: int = 2
    """How many events are sent before the fault happens."""
    model: str = "test-model"

    @property
    def neutral_stop(self) -> NeutralStop:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if self.tool_calls else "stop"


def call(name: str, arguments: dict[str, object], call_id: str = "c1") -> Turn:
    """A model turn that only calls the tool `name` with `arguments`."""
    return Turn(tool_calls=(ToolCallSpec(name, arguments, call_id),))


@dataclass(frozen=True)
class HttpError:
    """Answer with a status. The body is the service's error JSON around `message`, unless
    `body` is given verbatim."""

    status: int
    message: str = "scripted failure"
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    error_type: str = "api_error"


@dataclass(frozen=True)
class Replay:
    """Send a raw .sse file, written in pieces cut at the given byte offsets."""

    path: str
    cuts: tuple[int, ...] = ()
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (`content-encoding: gzip` for a compressed file)."""


Script = Turn | HttpError | Replay


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(size, 1))]


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {payload}\n\n".encode()


# ---------------------------------------------------------------- OpenAI Chat Completions

_OPENAI_FINISH = {"stop": "stop", "length": "length", "tool_use": "tool_calls"}


def _openai_chunk(turn: Turn, delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return sse(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": turn.model,
            "choices": [choice],
        }
    )


def render_openai(turn: Turn) -> list[bytes]:
    events = [_openai_chunk(turn, {"role": "assistant", "content": ""})]
    for piece in pieces(turn.thinking, turn.chunk_size):
        events.append(_openai_chunk(turn, {"reasoning_content": piece}))
    for piece in pieces(turn.text, turn.chunk_size):
        events.append(_openai_chunk(turn, {"content": piece}))
    for index, call in enumerate(turn.tool_calls):
        head = {"index": index, "id": call.id, "type": "function"}
        head["function"] = {"name": call.name, "arguments": ""}
        events.append(_openai_chunk(turn, {"tool_calls": [head]}))
        for piece in pieces(call.arguments_text, turn.chunk_size):
            fragment = {"index": index, "function": {"arguments": piece}}
            events.append(_openai_chunk(turn, {"tool_calls": [fragment]}))
    events.append(_openai_chunk(turn, {}, _OPENAI_FINISH[turn.neutral_stop]))
    usage = {
        "prompt_tokens": turn.input_tokens,
        "completion_tokens": turn.output_tokens,
        "total_tokens": turn.input_tokens + turn.output_tokens,
    }
    if turn.input_tokens or turn.output_tokens:
        events.append(sse({"id": "chatcmpl-1", "choices": [], "model": turn.model, "usage": usage}))
    events.append(b"data: [DONE]\n\n")
    return events


def openai_error_body(error: HttpError) -> str:
    return json.dumps({"error": {"message": error.message, "type": error.error_type}})


# ---------------------------------------------------------------- Anthropic Messages

_ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_use": "tool_use"}


def _block(index: int, block: dict[str, Any], deltas: list[dict[str, Any]]) -> list[bytes]:
    out = [
        sse(
            {"type": "content_block_start", "index": index, "content_block": block},
            "content_block_start",
        )
    ]
    for delta in deltas:
        out.append(
            sse(
                {"type": "content_block_delta", "index": index, "delta": delta},
                "content_block_delta",
            )
        )
    out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return out


def _anthropic_blocks(turn: Turn) -> list[list[bytes]]:
    blocks: list[list[bytes]] = []
    if turn.thinking:
        deltas = [
            {"type": "thinking_delta", "thinking": p}
            for p in pieces(turn.thinking, turn.chunk_size)
        ]
        deltas.append({"type": "signature_delta", "signature": turn.thinking_signature})
        blocks.append(_block(len(blocks), {"type": "thinking", "thinking": ""}, deltas))
    if turn.text:
        deltas = [{"type": "text_delta", "text": p} for p in pieces(turn.text, turn.chunk_size)]
        blocks.append(_block(len(blocks), {"type": "text", "text": ""}, deltas))
    for call in turn.tool_calls:
        deltas = [
            {"type": "input_json_delta", "partial_json": p}
            for p in pieces(call.arguments_text, turn.chunk_size)
        ]
        start = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        blocks.append(_block(len(blocks), start, deltas))
    return blocks


def render_anthropic(turn: Turn) -> list[bytes]:
    message: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": turn.model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": turn.input_tokens, "output_tokens": 1},
    }
    events = [sse({"type": "message_start", "message": message}, "message_start")]
    events.append(sse({"type": "ping"}, "ping"))
    for block in _anthropic_blocks(turn):
        events.extend(block)
    delta = {"stop_reason": _ANTHROPIC_STOP[turn.neutral_stop], "stop_sequence": None}
    usage = {"output_tokens": turn.output_tokens}
    events.append(sse({"type": "message_delta", "delta": delta, "usage": usage}, "message_delta"))
    events.append(sse({"type": "message_stop"}, "message_stop"))
    return events


def anthropic_error_body(error: HttpError) -> str:
    return json.dumps(
        {"type": "error", "error": {"type": error.error_type, "message": error.message}}
    )


MALFORMED = {
    "openai": b'data: {"choices": [{"delta": {"content": tru\n\n',
    "anthropic": b"event: content_block_delta\ndata: {not json\n\n",
}
