"""What the wire memo and the body encoder save per request late in a tool loop (issue 24).

A conversation of TURNS tool turns (an assistant tool call, then a read result of a 200-line
file), the seven built-in tools, the Chat Completions request: built and encoded as a tool
loop does, (a) with the provider's `WireMemo` and `BodyEncoder` reusing the previous request's
work, (b) plainly: every message converted and the body encoded with `json.dumps` each time.
Prints the median of each in ms per request, and of each part alone.

    .venv/bin/python -m scripts.bench.body_cost [TURNS]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable

from di_code.ai.providers.body_json import BodyEncoder
from di_code.ai.providers.openai import build_openai_request
from di_code.ai.providers.request_shared import WireMemo
from di_code.ai.stream import StreamOptions
from di_code.ai.types import (
    AssistantMessage,
    Context,
    Message,
    Model,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from di_code.tools.builtin.cards import BASH, EDIT, FIND, GREP, LS, READ, WRITE

MODEL = Model("bench-model", "bench-model", "openai", "openai-completions")
FILE_TEXT = "\n".join(f"line {n}: some text of a file, as read returns it" for n in range(200))
CARDS = (READ, WRITE, EDIT, BASH, GREP, FIND, LS)
SAMPLES = 41


def conversation(turns: int) -> list[Message]:
    messages: list[Message] = [UserMessage([TextContent("Read notes.txt again and again.")])]
    for turn in range(turns):
        call = ToolCall(f"call_{turn}", "read", {"path": "notes.txt"})
        messages.append(AssistantMessage([call], "openai", "bench-model", stop_reason="tool_use"))
        messages.append(ToolResultMessage(f"call_{turn}", "read", [TextContent(FILE_TEXT)]))
    return messages


def per_request_ms(encode: Callable[[Context], bytes], messages: list[Message]) -> float:
    """The median time to build and encode the request as the conversation grows by a turn:
    the last SAMPLES requests of a loop that starts 2 * SAMPLES messages earlier."""
    tools = [ToolDefinition(c.name, c.description, c.parameters) for c in CARDS]
    start = len(messages) - 2 * SAMPLES
    encode(Context("You are a coding agent.", messages[:start], tools))  # the requests before
    times = []
    for end in range(start + 2, len(messages) + 1, 2):
        context = Context("You are a coding agent.", messages[:end], tools)
        began = time.perf_counter()
        encode(context)
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    messages = conversation(turns)
    memo, encoder = WireMemo(), BodyEncoder()

    def kept(context: Context) -> bytes:
        return encoder.encode(build_openai_request(MODEL, context, StreamOptions(), memo))

    def plain(context: Context) -> bytes:
        body = build_openai_request(MODEL, context, StreamOptions())
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()

    memo_only, encoder_only = WireMemo(), BodyEncoder()

    def memo_dumps(context: Context) -> bytes:
        body = build_openai_request(MODEL, context, StreamOptions(), memo_only)
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()

    def encoder_alone(context: Context) -> bytes:
        return encoder_only.encode(build_openai_request(MODEL, context, StreamOptions()))

    assert kept(Context("s", messages, [])) == plain(Context("s", messages, []))
    figures = orjson_figure(messages) | {
        "memo + encoder": per_request_ms(kept, messages),
        "memo + json.dumps": per_request_ms(memo_dumps, messages),
        "encoder alone": per_request_ms(encoder_alone, messages),
        "plain json.dumps": per_request_ms(plain, messages),
    }
    for name, ms in figures.items():
        print(f"turn {turns}, {name}: {ms:.3f} ms per request")


def orjson_figure(messages: list[Message]) -> dict[str, float]:
    """orjson, a maintained C encoder, over the whole body every time (when it is installed:
    it is no dependency of di-code; `pip install --target DIR orjson` and PYTHONPATH=DIR)."""
    try:
        import orjson  # type: ignore[import-not-found]
    except ImportError:
        return {}

    def plain_orjson(context: Context) -> bytes:
        return bytes(orjson.dumps(build_openai_request(MODEL, context, StreamOptions())))

    return {"plain orjson": per_request_ms(plain_orjson, messages)}


if __name__ == "__main__":
    main()
