"""The three streaming wire formats the agents speak, built as whole response bodies.

di-code and pi read Chat Completions, Claude Code reads Anthropic Messages, Codex reads the
Responses API. `ScriptedModel` plays the same script in each: a tool call per request until the
conversation holds `turns` tool results, then a text answer of `words` words (one delta each).
Bodies are built before they are sent, so the server never throttles the client it measures.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Wire = Literal["chat", "anthropic", "responses"]
SSE = "text/event-stream"
JSON = "application/json"
MODEL = "bench-model"
CREATED = 1700000000


@dataclass(frozen=True, slots=True)
class ToolCall:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Reply:
    """Either text (streamed word by word) or one tool call."""

    words: Sequence[str] = ()
    call: ToolCall | None = None

    @property
    def text(self) -> str:
        return "".join(self.words)


def words_of(count: int, word: str = "tok ") -> list[str]:
    return [word] * count


def _data(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return f"event: {name}\n".encode() + _data(payload)


# Chat Completions -----------------------------------------------------------------------------


def chat_sse(reply: Reply) -> bytes:
    """A Chat Completions stream: role chunk, deltas, finish chunk, usage chunk, [DONE]."""
    base: dict[str, Any] = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": MODEL,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _data(base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    parts = [chunk({"role": "assistant", "content": ""})]
    if reply.call:
        call = {
            "index": 0,
            "id": reply.call.call_id,
            "type": "function",
            "function": {"name": reply.call.name, "arguments": json.dumps(reply.call.arguments)},
        }
        parts.append(chunk({"tool_calls": [call]}))
    parts.extend(chunk({"content": word}) for word in reply.words)
    parts.append(chunk({}, "tool_calls" if reply.call else "stop"))
    out = max(1, len(reply.words))
    usage = {"prompt_tokens": 10, "completion_tokens": out, "total_tokens": out + 10}
    parts.append(_data(base | {"choices": [], "usage": usage}))
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def chat_completion_sse(chunks: int, word: str = "tok ") -> bytes:
    """`chunks` Chat Completions text chunks, the finish chunk, a usage chunk and [DONE]."""
    return chat_sse(Reply(words_of(chunks, word)))


# Anthropic Messages ---------------------------------------------------------------------------


def anthropic_sse(reply: Reply) -> bytes:
    """message_start, one content block (text deltas or tool_use JSON), message_delta, stop."""
    message: dict[str, Any] = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    parts = [_event("message_start", {"type": "message_start", "message": message})]
    if reply.call:
        block = {"type": "tool_use", "id": reply.call.call_id, "name": reply.call.name, "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": json.dumps(reply.call.arguments)}]
    else:
        block = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": word} for word in reply.words]
    parts.append(
        _event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
    )
    parts.extend(
        _event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": d})
        for d in deltas
    )
    parts.append(_event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    stop = "tool_use" if reply.call else "end_turn"
    parts.append(
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": len(deltas)},
            },
        )
    )
    parts.append(_event("message_stop", {"type": "message_stop"}))
    return b"".join(parts)


def anthropic_message(reply: Reply) -> bytes:
    """The same reply as one non-streamed Messages response (side requests ask for these)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}]
    if reply.call:
        content = [
            {
                "type": "tool_use",
                "id": reply.call.call_id,
                "name": reply.call.name,
                "input": reply.call.arguments,
            }
        ]
    body = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": "tool_use" if reply.call else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": max(1, len(reply.words))},
    }
    return json.dumps(body).encode()


# Responses API --------------------------------------------------------------------------------


def responses_sse(reply: Reply) -> bytes:
    """response.created, one output item (message text deltas or a function call), completed.

    Every event carries its `type` (also as the SSE `event:` name) and a `sequence_number`
    counting from 0, as the Responses API streams them.
    """
    seq = iter(range(1 << 62))

    def event(kind: str, **fields: Any) -> bytes:
        return _event(kind, {"type": kind, "sequence_number": next(seq), **fields})

    response: dict[str, Any] = {
        "id": "resp_bench",
        "object": "response",
        "created_at": CREATED,
        "status": "in_progress",
        "model": MODEL,
        "output": [],
        "usage": None,
    }
    parts = [
        event("response.created", response=response),
        event("response.in_progress", response=response),
    ]
    where = {"output_index": 0}
    if reply.call:
        item: dict[str, Any] = {
            "id": "fc_bench",
            "type": "function_call",
            "status": "in_progress",
            "call_id": reply.call.call_id,
            "name": reply.call.name,
            "arguments": "",
        }
        arguments = json.dumps(reply.call.arguments)
        parts.append(event("response.output_item.added", item=item, **where))
        ids = {"item_id": item["id"], **where}
        parts.append(event("response.function_call_arguments.delta", delta=arguments, **ids))
        parts.append(event("response.function_call_arguments.done", arguments=arguments, **ids))
        done = item | {"status": "completed", "arguments": arguments}
    else:
        item = {
            "id": "msg_bench",
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        }
        ids = {"item_id": item["id"], **where, "content_index": 0}
        empty = {"type": "output_text", "text": "", "annotations": []}
        parts.append(event("response.output_item.added", item=item, **where))
        parts.append(event("response.content_part.added", part=empty, **ids))
        parts.extend(event("response.output_text.delta", delta=w, **ids) for w in reply.words)
        text = reply.text
        parts.append(event("response.output_text.done", text=text, **ids))
        part = empty | {"text": text}
        parts.append(event("response.content_part.done", part=part, **ids))
        done = item | {"status": "completed", "content": [part]}
    parts.append(event("response.output_item.done", item=done, **where))
    out = max(1, len(reply.words))
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": out + 10,
    }
    completed = response | {"status": "completed", "output": [done], "usage": usage}
    parts.append(event("response.completed", response=completed))
    return b"".join(parts)


STREAMS = {"chat": chat_sse, "anthropic": anthropic_sse, "responses": responses_sse}


# The script -----------------------------------------------------------------------------------


def tool_results(body: Any) -> int:
    """How many tool results the conversation in a request body holds, in any of the formats."""
    if isinstance(body, list):
        return sum(tool_results(item) for item in body)
    if not isinstance(body, dict):
        return 0
    own = body.get("role") == "tool" or body.get("type") in ("tool_result", "function_call_output")
    return int(own) + sum(tool_results(value) for value in body.values())


def tool_names(body: dict[str, Any]) -> list[str]:
    """The tool names a request offers: Chat's `function.name`, or a flat `name`."""
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            name = tool.get("name") or (tool.get("function") or {}).get("name")
            if name:
                names.append(name)
    return names


READ_TOOLS: dict[str, str] = {
    "read": "path",
    "Read": "file_path",
    "shell": "argv",
    "shell_command": "command",
    "exec_command": "cmd",
}
"""The read-only tool each agent offers, by name, and how its arguments name the file.
di-code and pi: `read`; Claude Code: `Read`; Codex: a shell tool running `cat`."""


def read_call(names: Sequence[str], path: str, turn: int) -> ToolCall:
    """A call reading `path` with the first read-only tool on offer."""
    for name, style in READ_TOOLS.items():
        if name in names:
            if style == "argv":
                arguments: dict[str, Any] = {"command": ["cat", path]}
            elif style in ("command", "cmd"):
                arguments = {style: f"cat {path}"}
            else:
                arguments = {style: path}
            return ToolCall(f"call_bench_{turn}", name, arguments)
    raise LookupError(f"no read-only tool among {sorted(names)}")


@dataclass(frozen=True, slots=True)
class ScriptedModel:
    """`turns` read calls (one per request), then `words` words of text, in `wire`'s format."""

    wire: Wire
    turns: int = 0
    words: int = 1
    read_path: str = ""
    _texts: dict[bool, tuple[str, bytes]] = field(default_factory=dict, repr=False)

    def reply(self, body: dict[str, Any]) -> Reply:
        done = tool_results(body)
        names = tool_names(body)
        if done < self.turns and names:
            return Reply(call=read_call(names, self.read_path, done))
        return Reply(words_of(self.words, "word "))

    def respond(self, body: dict[str, Any]) -> tuple[str, bytes]:
        """(content type, body) for one request body; the text answer is built once."""
        reply = self.reply(body)
        streamed = self.wire != "anthropic" or bool(body.get("stream"))
        if reply.call is None and streamed in self._texts:
            return self._texts[streamed]
        answer = (SSE, STREAMS[self.wire](reply)) if streamed else (JSON, anthropic_message(reply))
        if reply.call is None:
            self._texts[streamed] = answer
        return answer


def sse_events(body: bytes) -> Iterator[tuple[str | None, str]]:
    """(event name, data) per SSE event of a body: for tests and for checking what is sent."""
    for block in body.decode().split("\n\n"):
        if not block.strip():
            continue
        name = None
        data = []
        for line in block.split("\n"):
            key, _, value = line.partition(": ")
            if key == "event":
                name = value
            elif key == "data":
                data.append(value)
        yield name, "\n".join(data)
