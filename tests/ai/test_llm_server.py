"""The loopback model server itself: real sockets, both wire formats, faults and replay."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest

from tests.support.llm_server import HttpError, LLMServer, Replay, ToolCallSpec, Turn


def data_lines(text: str) -> list[str]:
    return [line[6:] for line in text.splitlines() if line.startswith("data: ")]


def test_openai_turn_is_chunked_sse_and_the_request_is_recorded(llm_server: LLMServer) -> None:
    llm_server.script(Turn(text="Hello there", tool_calls=(ToolCallSpec("ls", {"path": "."}),)))
    response = httpx.post(
        f"{llm_server.openai_base_url}/chat/completions",
        json={"model": "m", "stream": True},
        headers={"authorization": "Bearer k"},
    )
    assert response.headers["transfer-encoding"] == "chunked"
    assert response.headers["content-type"] == "text/event-stream"
    lines = data_lines(response.text)
    assert lines[-1] == "[DONE]"
    chunks = [json.loads(line) for line in lines[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "Hello there"
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert finishes[-1] == "tool_calls"
    assert chunks[-1]["usage"]["prompt_tokens"] == 10
    request = llm_server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer k"
    assert request.body == {"model": "m", "stream": True}


def test_anthropic_turn_uses_named_events(llm_server: LLMServer) -> None:
    llm_server.script(Turn(text="Hi", thinking="hmm", stop_reason="length"))
    response = httpx.post(f"{llm_server.anthropic_base_url}/v1/messages", json={})
    names = [line[7:] for line in response.text.splitlines() if line.startswith("event: ")]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    payloads = [json.loads(line) for line in data_lines(response.text)]
    signature = [p for p in payloads if p.get("delta", {}).get("type") == "signature_delta"]
    assert signature[0]["delta"]["signature"] == "sig-1"
    assert payloads[-2]["delta"]["stop_reason"] == "max_tokens"


def test_errors_empty_script_and_models(llm_server: LLMServer) -> None:
    llm_server.script(HttpError(429, "slow down", headers={"retry-after": "3"}))
    first = httpx.post(f"{llm_server.openai_base_url}/chat/completions", json={})
    assert first.status_code == 429
    assert first.headers["retry-after"] == "3"
    assert first.json()["error"]["message"] == "slow down"
    empty = httpx.post(f"{llm_server.anthropic_base_url}/v1/messages", json={})
    assert empty.status_code == 400
    assert "no scripted reply left" in empty.json()["error"]["message"]
    models = httpx.get(f"{llm_server.openai_base_url}/models")
    assert models.json()["data"][0]["id"] == "test-model"


def test_drop_ends_the_chunked_body_early(llm_server: LLMServer) -> None:
    llm_server.script(Turn(text="a long answer", fault="drop", fault_after=3))
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(f"{llm_server.openai_base_url}/chat/completions", json={})


def test_malformed_chunk_is_sent(llm_server: LLMServer) -> None:
    llm_server.script(Turn(text="abc", fault="malformed", fault_after=1))
    response = httpx.post(f"{llm_server.openai_base_url}/chat/completions", json={})
    assert "tru" in data_lines(response.text)[-1]


def test_stall_lasts_until_the_client_closes(llm_server: LLMServer) -> None:
    llm_server.script(Turn(text="abc", fault="stall", fault_after=1))
    with socket.create_connection(("127.0.0.1", llm_server.port)) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}"
        )
        assert sock.recv(100).startswith(b"HTTP/1.1 200")
    assert llm_server.wait_disconnects(1)


def test_replay_sends_the_file_in_pieces(llm_server: LLMServer, tmp_path: Path) -> None:
    fixture = tmp_path / "x.sse"
    fixture.write_bytes(b"data: one\n\ndata: two\n\n")
    llm_server.script(Replay(str(fixture), cuts=(3, 9)))
    response = httpx.post(f"{llm_server.openai_base_url}/chat/completions", json={})
    assert response.content == fixture.read_bytes()


def test_a_closed_server_refuses_connections() -> None:
    server = LLMServer().start()
    url = server.openai_base_url
    server.close()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/models")
