"""A provider keeps its HTTP/1.1 connection for the next request, as real servers expect.

Every translator stops at its stream's last event (`[DONE]`, `message_stop`, ...) while the
server may still have the end of the chunked body to send; the rest of the reply is read, so
the connection goes back to the pool instead of being closed, and a tool loop of n turns uses
one connection, not n. A reply that does not end soon after its last event is not waited for.
"""

from __future__ import annotations

import pytest

from di_code.ai.types import Context, TextContent, UserMessage
from tests.support.llm_server import LLMServer, Turn
from tests.support.streams import collect, model_for, provider_for
from tests.support.wire import render_openai


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses", "gemini"])
async def test_consecutive_requests_share_one_connection(kind: str) -> None:
    with LLMServer() as server:
        server.script(Turn(text="one"), Turn(text="two"), Turn(text="three"))
        provider = provider_for(kind, server)
        texts = []
        try:
            for _ in range(3):
                context = Context("sys", [UserMessage.of("hi")])
                _, message = await collect(provider.stream(model_for(kind), context))
                assert message.stop_reason == "stop", message.error_message
                texts.append(message.text)
        finally:
            await provider.aclose()
        assert texts == ["one", "two", "three"]
        assert server.connections == 1


async def test_a_reply_that_never_ends_after_its_last_event_is_not_waited_for() -> None:
    """The server sends `[DONE]` and then holds the body open: the answer is complete, the
    stream ends (the test would hang otherwise), and the next request takes a new connection."""
    stalled = Turn(text="done")
    every_event = len(render_openai(stalled))
    with LLMServer() as server:
        server.script(Turn(text="done", fault="stall", fault_after=every_event), Turn(text="again"))
        provider = provider_for("openai", server)
        try:
            model = model_for("openai")
            context = Context("sys", [UserMessage.of("hi")])
            _, first = await collect(provider.stream(model, context))
            _, second = await collect(provider.stream(model, context))
        finally:
            await provider.aclose()
        assert (first.stop_reason, first.content) == ("stop", [TextContent("done")])
        assert second.text == "again"
        assert server.connections == 2
