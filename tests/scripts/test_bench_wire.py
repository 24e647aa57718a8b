"""The benchmark's scripted model: its three stream formats and the script it plays.

The Chat and Anthropic streams are read by di-code's own providers over a real loopback socket;
the Responses stream (read by Codex, which needs npm) is checked event by event against the
format's rules: named events matching their `type`, sequence numbers from 0, deltas that add
up to the `.done` events and to the completed response.
"""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from di_code.ai.providers.anthropic import AnthropicProvider
from di_code.ai.providers.openai import OpenAIProvider
from di_code.ai.types import Context, ToolCall, ToolDefinition, UserMessage
from scripts.bench.loopback import Arrival, LoopbackServer
from scripts.bench.wire import (
    JSON,
    SSE,
    Reply,
    ScriptedModel,
    anthropic_sse,
    chat_completion_sse,
    chat_sse,
    read_call,
    responses_sse,
    sse_events,
    tool_results,
    words_of,
)
from scripts.bench.wire import ToolCall as ScriptedCall
from tests.support.streams import collect, model_for

READ = ToolDefinition("read", "Read a file", {"type": "object", "properties": {"path": {}}})
CALL = ScriptedCall("call_bench_0", "exec_command", {"cmd": "cat /w/notes.txt"})


def events_of(body: bytes) -> list[tuple[str | None, dict[str, Any]]]:
    return [(name, json.loads(data)) for name, data in sse_events(body) if data != "[DONE]"]


def test_responses_text_stream_is_well_formed() -> None:
    events = events_of(responses_sse(Reply(words_of(3, "word "))))
    names = [name for name, _ in events]
    assert all(name == data["type"] for name, data in events)
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    assert names[0] == "response.created"
    assert names[-1] == "response.completed"
    assert names.count("response.output_text.delta") == 3
    deltas = "".join(d["delta"] for n, d in events if n == "response.output_text.delta")
    done = next(d for n, d in events if n == "response.output_text.done")
    completed = events[-1][1]["response"]
    assert deltas == done["text"] == "word word word "
    assert completed["status"] == "completed"
    assert completed["output"][0]["content"][0] == {
        "type": "output_text",
        "text": deltas,
        "annotations": [],
    }
    assert completed["usage"]["output_tokens"] == 3
    added = next(d for n, d in events if n == "response.output_item.added")["item"]
    assert added["id"] == completed["output"][0]["id"]


def test_responses_function_call_stream_is_well_formed() -> None:
    events = events_of(responses_sse(Reply(call=CALL)))
    names = [name for name, _ in events]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    deltas = "".join(d["delta"] for n, d in events if n.endswith("arguments.delta"))
    item = events[-1][1]["response"]["output"][0]
    assert item["type"] == "function_call"
    assert (item["call_id"], item["name"]) == ("call_bench_0", "exec_command")
    assert json.loads(deltas) == json.loads(item["arguments"]) == CALL.arguments


def test_anthropic_events_are_named_by_their_type() -> None:
    events = events_of(anthropic_sse(Reply(call=CALL)))
    assert all(name == data["type"] for name, data in events)
    assert events[0][0] == "message_start"
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_chat_stream_matches_the_throughput_figures_body() -> None:
    assert chat_sse(Reply(words_of(4))) == chat_completion_sse(4)
    assert chat_completion_sse(2).endswith(b"data: [DONE]\n\n")


@pytest.mark.parametrize("wire", ["chat", "anthropic"])
async def test_di_codes_providers_read_the_scripted_streams(wire: str) -> None:
    model = ScriptedModel(wire, turns=1, words=2, read_path="/w/notes.txt")  # type: ignore[arg-type]
    with LoopbackServer(model) as server:
        if wire == "chat":
            provider: Any = OpenAIProvider(base_url=server.base_url, api_key="k")
            kind = "openai"
        else:
            provider = AnthropicProvider(base_url=server.origin, api_key="k")
            kind = "anthropic"
        context = Context("sys", [UserMessage.of("go")], [READ])
        _, first = await collect(provider.stream(model_for(kind), context))
    assert first.content == [ToolCall("call_bench_0", "read", {"path": "/w/notes.txt"})]
    assert first.stop_reason == "tool_use"
    arrival = server.arrivals[0]
    assert arrival.tool_results == 0
    assert arrival.path.endswith("/chat/completions" if wire == "chat" else "/v1/messages")


def test_script_calls_the_read_tool_until_enough_results_then_answers() -> None:
    model = ScriptedModel("responses", turns=2, words=3, read_path="/w/n.txt")
    tools = [{"type": "function", "name": "exec_command"}]
    first = model.reply({"input": [{"role": "user"}], "tools": tools})
    assert first.call == ScriptedCall("call_bench_0", "exec_command", {"cmd": "cat /w/n.txt"})
    one_result = [{"type": "function_call"}, {"type": "function_call_output", "output": "x"}]
    assert model.reply({"input": one_result, "tools": tools}).call is not None
    done = model.reply({"input": one_result * 2, "tools": tools})
    assert done.call is None
    assert done.text == "word word word "


def test_each_agents_read_tool_gets_its_own_arguments() -> None:
    assert read_call(["bash", "read"], "/f", 0).arguments == {"path": "/f"}
    assert read_call(["Bash", "Read"], "/f", 0).arguments == {"file_path": "/f"}
    assert read_call(["shell"], "/f", 0).arguments == {"command": ["cat", "/f"]}
    assert read_call(["shell_command"], "/f", 0).arguments == {"command": "cat /f"}
    with pytest.raises(LookupError, match="no read-only tool"):
        read_call(["write"], "/f", 0)


def test_tool_results_are_counted_in_all_three_formats() -> None:
    chat = {"messages": [{"role": "user"}, {"role": "assistant"}, {"role": "tool"}]}
    anthropic = {"messages": [{"role": "user", "content": [{"type": "tool_result"}] * 2}]}
    responses = {"input": [{"type": "function_call_output"}] * 3}
    assert [tool_results(b) for b in (chat, anthropic, responses, None)] == [1, 2, 3, 0]


def post(server: LoopbackServer, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", int(server.origin.rsplit(":", 1)[1]), timeout=10)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        answer = conn.getresponse()
        return answer.getheader("Content-Type") or "", answer.read()
    finally:
        conn.close()


def test_server_answers_side_requests_and_reports_each_arrival() -> None:
    seen: list[Arrival] = []
    with LoopbackServer(ScriptedModel("anthropic"), on_arrival=seen.append) as server:
        kind, body = post(server, "/v1/messages", {"messages": [], "max_tokens": 1})
        assert kind == JSON
        assert json.loads(body)["content"] == [{"type": "text", "text": "word "}]
        kind, body = post(server, "/v1/messages", {"messages": [], "stream": True})
        assert kind == SSE
        assert [n for n, _ in sse_events(body)][-1] == "message_stop"
        _, body = post(server, "/v1/messages/count_tokens", {"messages": []})
        assert json.loads(body) == {"input_tokens": 10}
    assert [a.path for a in seen] == ["/v1/messages"] * 2 + ["/v1/messages/count_tokens"]
    assert server.arrivals == seen


def test_server_keeps_connections_alive_until_the_client_asks_to_close() -> None:
    """Requests follow each other on one connection, as on real model servers; a client's
    `Connection: close` is honoured."""
    with LoopbackServer(ScriptedModel("chat", turns=1, read_path="/f")) as server:
        port = int(server.origin.rsplit(":", 1)[1])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            bodies = []
            for headers in ({}, {}, {"Connection": "close"}):
                conn.request("POST", "/v1/chat/completions", json.dumps({}), headers)
                bodies.append(conn.getresponse().read())
            assert all(body.endswith(b"data: [DONE]\n\n") for body in bodies)
            assert conn.sock is not None
            assert conn.sock.recv(1) == b""  # the server closed it after the last answer
        finally:
            conn.close()
        post(server, "/v1/chat/completions", {})
    assert [a.connection for a in server.arrivals] == [0, 0, 0, 1]
    assert server.connections == 2
