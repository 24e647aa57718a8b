"""The loopback server's Responses API and Gemini wire formats: routes, events, errors, and
refusing a request shape the real service refuses without using up a scripted reply."""

from __future__ import annotations

import json

import httpx

from tests.support.llm_server import HttpError, LLMServer, ToolCallSpec, Turn


def data_lines(text: str) -> list[str]:
    return [line[6:] for line in text.splitlines() if line.startswith("data: ")]


GOOD_RESPONSES = {"model": "m", "input": [{"role": "user", "content": "hi"}], "stream": True}
GOOD_GEMINI = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def gemini_url(server: LLMServer, query: str = "?alt=sse") -> str:
    return f"{server.url}/v1beta/models/gemini-x:streamGenerateContent{query}"


def test_responses_events_are_named_numbered_and_end_with_the_response(
    llm_server: LLMServer,
) -> None:
    llm_server.script(Turn(text="Hi", thinking="hmm", stop_reason="length"))
    response = httpx.post(f"{llm_server.openai_base_url}/responses", json=GOOD_RESPONSES)
    names = [line[7:] for line in response.text.splitlines() if line.startswith("event: ")]
    payloads = [json.loads(line) for line in data_lines(response.text)]
    assert [p["type"] for p in payloads] == names
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    assert names[0] == "response.created" and names[-1] == "response.incomplete"
    reasoning = next(p["item"] for p in payloads if p["type"] == "response.output_item.done")
    assert reasoning["encrypted_content"] == "sig-1"


def test_a_refused_request_shape_is_a_400_and_keeps_the_scripted_reply(
    llm_server: LLMServer,
) -> None:
    llm_server.script(Turn(text="kept"))
    bad = {**GOOD_RESPONSES, "input": [{"role": "assistant", "content": [{"type": "input_text"}]}]}
    refused = httpx.post(f"{llm_server.openai_base_url}/responses", json=bad)
    assert refused.status_code == 400
    assert refused.json()["error"]["message"].startswith("Invalid value: 'input_text'")
    bad_gemini = {"contents": [{"role": "user", "parts": [{"text": "a", "inlineData": {}}]}]}
    refused = httpx.post(gemini_url(llm_server), json=bad_gemini)
    assert refused.status_code == 400
    assert refused.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert llm_server.pending() == 1
    assert "kept" in httpx.post(gemini_url(llm_server), json=GOOD_GEMINI).text


def test_gemini_needs_alt_sse_and_errors_carry_the_status_name(llm_server: LLMServer) -> None:
    assert httpx.post(gemini_url(llm_server, ""), json=GOOD_GEMINI).status_code == 404
    llm_server.script(HttpError(429, "Resource has been exhausted"))
    busy = httpx.post(gemini_url(llm_server), json=GOOD_GEMINI)
    assert busy.status_code == 429
    assert busy.json() == {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted",
            "status": "RESOURCE_EXHAUSTED",
        }
    }


def test_gemini_chunks_put_the_signature_on_the_first_call(llm_server: LLMServer) -> None:
    calls = (ToolCallSpec("ls", {}), ToolCallSpec("read", {"path": "a"}, "call_2"))
    llm_server.script(Turn(thinking="plan", text="ok", tool_calls=calls))
    response = httpx.post(gemini_url(llm_server), json=GOOD_GEMINI)
    parts = [
        part
        for line in data_lines(response.text)
        for part in json.loads(line)["candidates"][0]["content"]["parts"]
    ]
    signed = [part for part in parts if "thoughtSignature" in part]
    assert [list(part) for part in signed] == [["functionCall", "thoughtSignature"]]
    assert signed[0]["functionCall"]["name"] == "ls"
    assert json.loads(data_lines(response.text)[-1])["candidates"][0]["finishReason"] == "STOP"
